/// What the feeds hold.
package struct FeedStatistics: Sendable {
    package var feeds: Int
    /// Versions retained across feeds.
    package var versions: Int
    /// Bytes held in this process's memory, estimated: the store's and the answers kept.
    package var bytes: Int
    package var parkedLongPolls: Int
}
