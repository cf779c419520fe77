/// What the feeds hold.
public struct FeedStatistics: Sendable {
    public var feeds: Int
    /// Versions retained across feeds.
    public var versions: Int
    /// Bytes held in this process's memory, estimated: the store's and the answers kept.
    public var bytes: Int
    public var parkedLongPolls: Int
}
