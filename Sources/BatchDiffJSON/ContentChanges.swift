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
        switch (batch, old, new) {
        case (.list(let batch), .list(let oldItems), .list(let newItems)):
            let reloaded = try batch.values(from: newItems).reloadedRows
            rows = zip(batch.rows.reloaded, reloaded).map { path, newItem in (oldText[oldItems[path].span], newText[newItem.span]) }
            sections = []
        case (.sectioned(let batch), .sectioned(let oldSections), .sectioned(let newSections)):
            let values = try batch.values(from: newSections.flat)
            rows = zip(batch.rows.reloaded, values.reloadedRows).map { path, newItem in
                (oldText[oldSections[path.section].items[path.row].span], newText[newItem.span])
            }
            sections = try zip(batch.oldIndexesOfUpdatedSections(), values.updatedHeaders).map { oldSection, newHeader in
                (oldText[oldSections[oldSection].header.span], newText[newHeader.span])
            }
        default:
            throw BatchError("a batch of another shape than its collections")
        }
    }
}
