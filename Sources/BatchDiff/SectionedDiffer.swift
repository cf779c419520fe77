/// Computes the batch between two sectioned collections.
///
/// This part is generic: it pairs sections and rows by identity and compares the content
/// of paired ones. Everything after that works on indexes alone, in ``BatchPlanner``.
@usableFromInline
struct SectionedDiffer<Header: Diffable, Items: DiffableElements> {
    @usableFromInline let old: FlatCollection<Header, Items>
    @usableFromInline let new: FlatCollection<Header, Items>
    @usableFromInline let options: DiffOptions

    @inlinable
    init(old: FlatCollection<Header, Items>, new: FlatCollection<Header, Items>, options: DiffOptions) {
        self.old = old
        self.new = new
        self.options = options
    }

    @inlinable
    func batch() -> SectionedBatch {
        var sections = Pairing(oldCount: old.headers.count, newCount: new.headers.count)
        sections.pair(old: old.headers, old.headers.indices, new: new.headers, new.headers.indices)
        var rows = Pairing(oldCount: old.items.count, newCount: new.items.count)
        for newSection in new.headers.indices {
            guard let oldSection = sections.partner(ofNew: newSection) else { continue }
            let (oldRows, newRows) = (old.shape.rows(of: oldSection), new.shape.rows(of: newSection))
            // Without moves only the rows that keep their order count (PairingKeepingOrder.swift).
            if options.allowsMoves {
                rows.pair(old: old.items, oldRows, new: new.items, newRows)
            } else {
                rows.pairKeepingOrder(old: old.items, oldRows, new: new.items, newRows)
            }
        }
        var rowUnchanged = [Bool](filling: false, count: old.items.count)
        rowUnchanged.withUnsafeMutableBufferPointer { rowUnchanged in  // (no uniqueness check per row)
            for oldIndex in 0..<old.items.count {
                guard let newIndex = rows.partner(ofOld: oldIndex) else { continue }
                rowUnchanged[oldIndex] = old.items.hasContent(at: oldIndex, of: newIndex, in: new.items)
            }
        }
        let headerUnchanged = old.headers.indices.map { oldSection in
            sections.partner(ofOld: oldSection).map { old.headers[oldSection].isContentEqual(to: new.headers[$0]) } ?? false
        }
        // Handed over, not shared: the planner changes them, and a shared array is copied.
        var planner = BatchPlanner(
            old: old.shape, new: new.shape, sections: consume sections, rows: consume rows,
            rowUnchanged: consume rowUnchanged, headerUnchanged: headerUnchanged, allowsMoves: options.allowsMoves
        )
        planner.settleSectionMoves()
        pairAcrossSections(&planner)
        return planner.batch()
    }

    /// Pairs the rows still unpaired in staying sections with each other, across sections.
    @inlinable
    func pairAcrossSections(_ planner: inout BatchPlanner) {
        let (oldLeft, newLeft) = planner.unpairedRowsOfStayingSections()
        guard !oldLeft.isEmpty, !newLeft.isEmpty else { return }
        let across = pairLeftovers(old: oldLeft, new: newLeft, planner.rowPairing)
        for (position, oldIndex) in oldLeft.enumerated() {
            guard let partner = across.partner(ofOld: position) else { continue }
            let newIndex = newLeft[partner]
            planner.pairRows(old: oldIndex, new: newIndex, unchanged: old.items.hasContent(at: oldIndex, of: newIndex, in: new.items))
        }
    }

    /// The pairing of the rows `oldLeft` and `newLeft`, all unpaired in `rows` (whose
    /// entries keep most of their hashes). Its own function: the views of `rows`' entries are
    /// gone by the time the planner changes them, so nothing copies them.
    @inlinable
    func pairLeftovers(old oldLeft: [Int], new newLeft: [Int], _ rows: Pairing) -> Pairing {
        let oldItems = SelectedElements(old.items, at: oldLeft, entries: rows.oldToNew)
        let newItems = SelectedElements(new.items, at: newLeft, entries: rows.newToOld)
        var across = Pairing(oldCount: oldItems.count, newCount: newItems.count)
        across.pair(old: oldItems, 0..<oldItems.count, new: newItems, 0..<newItems.count)
        return across
    }
}
