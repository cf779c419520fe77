/// A window of a feed, `offset ..< offset+limit`, or the `limit` after the row of an
/// identity: a list's rows, or a sectioned collection's sections, each whole
/// (docs/feeds.md §5.3).
public struct RowWindow: Hashable, Sendable {
    public var offset: Int
    public var limit: Int
    /// The identity of the row (section) the window starts after, when it is anchored on
    /// one: it then follows that row wherever rows come or go above it (`offset` unused).
    public var after: String?

    /// `offset` 0 or more (and short of the largest integer), `limit` 1 to 10,000.
    public init(offset: Int, limit: Int) {
        self.offset = Swift.min(Swift.max(offset, 0), Int.max - 10_000)
        self.limit = Swift.min(Swift.max(limit, 1), 10_000)
    }

    /// The `limit` rows (sections) after the one of `identity` (as the feed's `after` reads
    /// it: JSON when it is JSON, such as a number, else a string), `limit` 1 to 10,000.
    public init(after identity: String, limit: Int) {
        self.init(offset: 0, limit: limit)
        after = identity
    }

    /// The query that asks for it: `offset=…&limit=…` or `after=…&limit=…`.
    var query: String {
        (after.map { "after=\(percentEncoded($0))" } ?? "offset=\(offset)") + "&limit=\(limit)"
    }
}
