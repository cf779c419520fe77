import BatchDiff
import BatchDiffJSON

/// What a window's `changes` answer is written from (``FeedAnswers/window(_:feed:from:to:offset:format:)``):
/// the window's batch, the texts of its values, and the new window's elements, read from the
/// latest collection's rows as patches keep them, in time proportional to the window.
struct WindowContent: Sendable {
    let batch: JSONBatch
    private(set) var values: ValueTexts
    /// The new window as a reload's `data`: the rows' array, or the collection with only the
    /// window's sections.
    let data: [UInt8]
    /// The new window's flat elements (docs/batch-format.md §7), each one's text: the rows,
    /// or each section's header (its object without `items`) and then its rows.
    let flat: [ArraySlice<UInt8>]
    /// A sectioned window's sections, each whole (none for a list's).
    let sections: [ArraySlice<UInt8>]
    /// The rows (sections) of the whole collection, before and after.
    var total: (old: Int, new: Int)
    /// The changed members of the window's reloaded rows and updated headers, when asked for.
    private(set) var changedMembers: ChangedMembers?

    /// Takes what the window's reloaded rows and updated headers carry beyond their texts,
    /// as `options` ask: their changed members, their merge entries (in ``values``). Both
    /// come from `whole`, the whole collection's answer asked with them (`nil` from version 0
    /// or from the latest, where nothing is reloaded), the window's first element at
    /// `oldOffset` in the older version, at `newOffset` in the latest.
    mutating func take(_ options: AnswerOptions, from whole: ComputedAnswer?, oldOffset: Int, newOffset: Int) {
        if options.changedMembers {
            let (rows, sections) = aligned(whole?.changedMembers.map { ($0.rows, $0.sections) }, from: whole?.batch, oldOffset: oldOffset, newOffset: newOffset)
            changedMembers = ChangedMembers(rows: rows.map { $0 ?? nil }, sections: sections.map { $0 ?? nil })
        }
        if options.values == .merge {
            let (rows, sections) = aligned(whole?.merge.map { ($0.rows, $0.sections) }, from: whole?.batch, oldOffset: oldOffset, newOffset: newOffset)
            // Every row the window reloads, the whole collection's batch reloads: an entry
            // missing there would still be answered, whole.
            values.merge = MergeValues(
                rows: rows.enumerated().map { index, entry in entry ?? MergeValues.item(values.reloadedRows[index]) },
                sections: sections.enumerated().map { index, entry in entry ?? MergeValues.item(values.updatedSections[index], ignoring: "items") }
            )
        }
    }

    /// `entries`, aligned with the reloaded rows and updated sections of `whole`'s batch,
    /// aligned with the window's instead (`nil` where the whole batch has none).
    private func aligned<Entry>(
        _ entries: (rows: [Entry], sections: [Entry])?, from whole: JSONBatch?, oldOffset: Int, newOffset: Int
    ) -> (rows: [Entry?], sections: [Entry?]) {
        guard let entries, let whole else { return ([], []) }
        switch (whole, batch) {
        case (.list(let whole), .list(let window)):
            let byRow = Dictionary(uniqueKeysWithValues: zip(whole.rows.reloaded, entries.rows))
            return (window.rows.reloaded.map { byRow[$0 + oldOffset] }, [])
        case (.sectioned(let whole), .sectioned(let window)):
            let byRow = Dictionary(uniqueKeysWithValues: zip(whole.rows.reloaded, entries.rows))
            let bySection = Dictionary(uniqueKeysWithValues: zip(whole.sections.updated, entries.sections))
            return (
                window.rows.reloaded.map { byRow[RowPath(section: $0.section + oldOffset, row: $0.row)] },
                window.sections.updated.map { bySection[$0 + newOffset] }
            )
        default:
            return ([], [])
        }
    }

    /// The window `seen` of `rows`, the latest list, whose first row is at `start`.
    init(_ seen: ListBatchWindow, of rows: borrowing ListRows, from start: Int, total: (old: Int, new: Int)) {
        let nodes = rows.order.rows(at: start..<start + seen.batch.newCount)
        let texts = nodes.map { rows.texts[rows.order.location(of: $0)] }
        batch = .list(seen.batch)
        values = ValueTexts(insertedRows: seen.batch.rows.inserted.map { texts[$0] }, reloadedRows: seen.reloadedPositions.map { texts[$0 - start] })
        var output = JSONOutput(capacity: texts.reduce(2) { $0 + $1.count + 1 })
        output.array(texts) { output, text in output.value(text: text) }
        data = output.bytes
        flat = texts
        sections = []
        self.total = total
    }

    /// The window `seen` of `sections`, the latest sectioned collection: its sections
    /// `nodes`, the first at `start`.
    init(_ seen: SectionedBatchWindow, of sections: borrowing SectionedRows, nodes: [Int32], from start: Int, total: (old: Int, new: Int)) {
        let rows = nodes.map { node in sections[node].rows.rowsInOrder().map { sections.texts[sections[node].rows.location(of: $0)] } }
        let texts = nodes.map { sections.text(of: $0)[...] }
        batch = .sectioned(seen.batch)
        values = ValueTexts(
            insertedRows: seen.batch.rows.inserted.map { rows[$0.section][$0.row] },
            reloadedRows: seen.reloadedPaths.map { rows[$0.section - start][$0.row] },
            insertedSections: seen.batch.sections.inserted.map { texts[$0] },
            updatedSections: seen.batch.sections.updated.map { sections.headerText(of: nodes[$0])[...] }
        )
        data = sections.text(withSections: texts)
        self.sections = texts
        var flat: [ArraySlice<UInt8>] = []
        for (node, sectionRows) in zip(nodes, rows) {
            var header = JSONOutput(capacity: 64)
            if let value = try? JSONDocument(bytes: sections.headerText(of: node)).root { header.object(value, without: "items") }
            flat.append(header.bytes[...])
            flat += sectionRows
        }
        self.flat = flat
        self.total = total
    }
}
