import BatchDiffFeeds
import BatchDiffTokens

/// What the service enforces beyond HTTP: tokens, the memory feeds may hold, long-poll
/// limits (retention in versions is the store's).
package struct ServiceConfiguration: Sendable {
    /// When set, `PUT` and `DELETE` need `Authorization: Bearer <token>`.
    package var writeToken: String?
    /// When set, feed reads and `POST /diff` need `Authorization: Bearer <token>` (the
    /// write token is accepted too).
    package var readToken: String?
    /// When set, signed tokens verified by these keys grant reads and writes of the feeds
    /// they name (docs/security.md).
    package var tokenKeys: TokenKeyring?
    /// When set, the parked long polls and event streams one client may hold at once
    /// (docs/security.md): beyond it, 429 `too_many_streams`.
    package var maxStreamsPerClient: Int?
    /// The feeds anyone may read, with or without a token (`--public-feeds`): their read
    /// answers are `public` (shared caches may keep them) whoever asked. Every other feed
    /// needs a token that grants it when tokens are configured, and its answers to a token
    /// holder are `private`.
    package var publicFeeds: [FeedPattern] = []
    /// The source that keeps some feeds (`--source-database`): reads of its ids make them,
    /// writes are 409 `feed_is_sourced`.
    package var source: (any FeedSource)?
    /// Bytes all feeds may hold in memory (the answers kept and what the store keeps in memory).
    package var maxFeedMemory = 512 << 20
    /// The longest `wait` a long poll may ask for, in seconds.
    package var maxWait = 60
    /// Seconds an event stream may go without sending anything: a comment is sent then, so
    /// that proxies keep it open and a client gone away is noticed.
    package var eventHeartbeat = 15

    package init() {}

    /// Whether feed `name` is public (``publicFeeds``).
    func isPublic(_ name: String) -> Bool { publicFeeds.contains { $0.matches(name) } }
}
