/// A window of a feed: a list's rows, or a sectioned collection's sections, each whole,
/// `offset..<offset+limit` (docs/feeds.md §5.3).
package struct FeedWindow: Sendable, Hashable {
    package var offset: Int
    package var limit: Int

    package init(offset: Int, limit: Int) {
        self.offset = offset
        self.limit = limit
    }
}
