/// Feeds another system keeps (a database followed through logical replication): a source
/// claims feed ids, makes a feed when it is first read, and writes its versions itself,
/// so that clients' writes to its ids are refused (``FeedError/sourced(_:)``).
package protocol FeedSource: Sendable {
    /// Whether `id` is one of the source's feeds, made or not.
    func claims(_ id: FeedID) -> Bool

    /// Makes feed `id` when it is not made yet (before a read of it answers), and notes
    /// that it was read: ``FeedError/notFound(_:)`` when the id names no rows the source
    /// can select, ``FeedError/sourceUnavailable(_:)`` when the source cannot be reached.
    func prepare(_ id: FeedID) async throws(FeedError)

    /// Whether the source answers now (readiness).
    var isAvailable: Bool { get }
}
