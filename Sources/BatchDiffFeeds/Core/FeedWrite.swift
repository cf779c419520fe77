/// What a write stored, and its answer (`{"feed","version","changed", ...batch}`).
public struct FeedWrite: Sendable {
    /// The feed's latest version after the write.
    public var version: Int
    /// Whether the write made a new version.
    public var changed: Bool
    /// The answer's JSON.
    public var body: [UInt8]
    /// The bytes of the feed's latest text the write read or made (0 for a repeat answered
    /// from its `Idempotency-Key`): what its work was proportional to.
    public var textCount: Int
}
