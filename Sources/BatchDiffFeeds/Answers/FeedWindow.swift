/// A window of a feed: a list's rows, or a sectioned collection's sections, each whole,
/// `offset..<offset+limit` (docs/feeds.md §5.3).
public struct FeedWindow: Sendable, Hashable {
    public var offset: Int
    public var limit: Int

    public init(offset: Int, limit: Int) {
        self.offset = offset
        self.limit = limit
    }
}
