/// What the service enforces beyond HTTP: tokens, feed retention, long-poll limits.
public struct ServiceConfiguration: Sendable {
    /// When set, `PUT` and `DELETE` need `Authorization: Bearer <token>`.
    public var writeToken: String?
    /// When set, feed reads and `POST /diff` need `Authorization: Bearer <token>` (the
    /// write token is accepted too).
    public var readToken: String?
    /// Versions kept per feed, the latest included.
    public var maxVersionsPerFeed = 64
    /// Bytes all feeds may hold; past it the oldest versions go first, never a latest one.
    public var maxFeedMemory = 512 << 20
    /// The longest `wait` a long poll may ask for, in seconds.
    public var maxWait = 60

    public init() {}
}
