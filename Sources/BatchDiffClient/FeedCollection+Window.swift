import BatchDiff

extension FeedCollection {
    /// What a window counts: a list's rows, or a sectioned collection's sections.
    var windowCount: Int {
        switch self {
        case .list(let items): items.count
        case .sectioned(let sections): sections.count
        }
    }

    /// The window this one (a window's rows, or sections) becomes when it moves: its
    /// elements `kept`, with `head` (a page) before them and `tail` after; and the update
    /// that takes this one to it, the elements outside `kept` deleted and the pages'
    /// inserted. `nil` when a page is of another shape.
    func moved(keeping kept: Range<Int>, head: FeedCollection?, tail: FeedCollection?) -> (FeedCollection, BatchUpdate)? {
        let headCount = head?.windowCount ?? 0
        let deleted = Array(0..<kept.lowerBound) + Array(kept.upperBound..<windowCount)
        switch (self, head ?? .list([]), tail ?? .list([])) {
        case (.list(let items), .list(let before), .list(let after)):
            let next = before + items[kept] + after
            let inserted = Array(0..<headCount) + Array(headCount + kept.count..<next.count)
            return (.list(next), .list(ListBatch(rows: RowChanges(deleted: deleted, inserted: inserted), oldCount: items.count, newCount: next.count)))
        case (.sectioned(let sections), let before, let after):
            guard let before = before.sectionsOrEmpty, let after = after.sectionsOrEmpty else { return nil }
            let next = before + sections[kept] + after
            let inserted = Array(0..<headCount) + Array(headCount + kept.count..<next.count)
            let batch = SectionedBatch(
                sections: SectionChanges(deleted: deleted, inserted: inserted), rows: RowChanges(),
                oldCounts: sections.map(\.items.count), newCounts: next.map(\.items.count)
            )
            return (.sectioned(next), .sectioned(batch))
        default:
            return nil
        }
    }

    /// Its elements (a list's rows, or sections) `range`.
    func elements(_ range: Range<Int>) -> FeedCollection {
        switch self {
        case .list(let items): .list(Array(items[range]))
        case .sectioned(let sections): .sectioned(Array(sections[range]))
        }
    }

    /// A sectioned collection's sections; none for an empty list (no page); `nil` for a list with rows.
    private var sectionsOrEmpty: [Section<Header, Item>]? {
        switch self {
        case .sectioned(let sections): sections
        case .list(let items): items.isEmpty ? [] : nil
        }
    }
}
