/// A window of a feed, `offset ..< offset+limit`: a list's rows, or a sectioned
/// collection's sections, each whole (docs/feeds.md §5.3).
public struct RowWindow: Hashable, Sendable {
    public var offset: Int
    public var limit: Int

    /// `offset` 0 or more (and short of the largest integer), `limit` 1 to 10,000.
    public init(offset: Int, limit: Int) {
        self.offset = Swift.min(Swift.max(offset, 0), Int.max - 10_000)
        self.limit = Swift.min(Swift.max(limit, 1), 10_000)
    }
}
