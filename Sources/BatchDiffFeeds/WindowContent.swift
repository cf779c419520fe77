import BatchDiff
import BatchDiffJSON

/// What a window's `changes` answer is written from (``FeedAnswers/window(_:feed:from:to:offset:format:)``):
/// the window's batch, the texts of its values, and the new window's elements, read from the
/// latest collection's rows as patches keep them, in time proportional to the window.
struct WindowContent {
    let batch: JSONBatch
    let values: ValueTexts
    /// The new window as a reload's `data`: the rows' array, or the collection with only the
    /// window's sections.
    let data: [UInt8]
    /// The new window's flat elements (docs/batch-format.md §7), each one's text: the rows,
    /// or each section's header (its object without `items`) and then its rows.
    let flat: [ArraySlice<UInt8>]
    /// The rows (sections) of the whole collection, before and after.
    let total: (old: Int, new: Int)

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
