import BatchDiff

/// The old and the new text of each content change of a batch, in the batch's order: each
/// reloaded row, and each updated section (its whole text: the header is the text without
/// `items`). What ``ChangedMembers`` and ``MergeValues`` are read from.
struct ContentChanges {
    var rows: [(old: ArraySlice<UInt8>, new: ArraySlice<UInt8>)]
    var sections: [(old: ArraySlice<UInt8>, new: ArraySlice<UInt8>)]

    /// The content changes of `batch`, which turns `old` into `new`: collections read from
    /// the JSON texts `oldText` and `newText`, whose items' spans point into them.
    init(of batch: JSONBatch, old: JSONCollection, oldText: [UInt8], new: JSONCollection, newText: [UInt8]) throws {
        switch (batch, new) {
        case (.list(let batch), .list(let newItems)):
            let reloaded = try batch.values(from: newItems).reloadedRows
            try self.init(of: .list(batch), old: old, oldText: oldText, newRows: reloaded.map { newText[$0.span] }, newSections: [])
        case (.sectioned(let batch), .sectioned(let newSections)):
            let values = try batch.values(from: newSections.flat)
            try self.init(
                of: .sectioned(batch), old: old, oldText: oldText,
                newRows: values.reloadedRows.map { newText[$0.span] }, newSections: values.updatedHeaders.map { newText[$0.span] }
            )
        default:
            throw BatchError("a batch of another shape than its collections")
        }
    }

    /// The content changes of `batch` from `old` (read from the JSON text `oldText`), their
    /// new texts given: `newRows` aligned with `rows.reloaded`, `newSections` (each section's
    /// text) with `sections.updated`. Only the old side is looked up, row by row.
    init(of batch: JSONBatch, old: JSONCollection, oldText: [UInt8], newRows: [ArraySlice<UInt8>], newSections: [ArraySlice<UInt8>]) throws {
        switch (batch, old) {
        case (.list(let batch), .list(let oldItems)):
            guard batch.rows.reloaded.count == newRows.count, batch.rows.reloaded.allSatisfy(oldItems.indices.contains) else {
                throw BatchError("reloaded rows that do not fit the old collection")
            }
            rows = zip(batch.rows.reloaded, newRows).map { index, new in (oldText[oldItems[index].span], new) }
            sections = []
        case (.sectioned(let batch), .sectioned(let oldSections)):
            let fits = batch.rows.reloaded.allSatisfy { oldSections.indices.contains($0.section) && oldSections[$0.section].items.indices.contains($0.row) }
            guard fits, batch.rows.reloaded.count == newRows.count, batch.sections.updated.count == newSections.count else {
                throw BatchError("reloaded rows or updated sections that do not fit the old collection")
            }
            rows = zip(batch.rows.reloaded, newRows).map { path, new in (oldText[oldSections[path.section].items[path.row].span], new) }
            sections = try zip(batch.oldIndexesOfUpdatedSections(), newSections).map { oldSection, new in
                (oldText[oldSections[oldSection].header.span], new)
            }
        default:
            throw BatchError("a batch of another shape than its collections")
        }
    }
}
