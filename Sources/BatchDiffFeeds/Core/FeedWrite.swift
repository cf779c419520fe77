/// What a write stored, and its answer (`{"feed","version","changed", ...batch}`).
package struct FeedWrite: Sendable {
    /// The feed's latest version after the write.
    package var version: Int
    /// Whether the write made a new version.
    package var changed: Bool
    /// The answer's JSON.
    package var body: [UInt8]
    /// The bytes of the feed's latest text the write read or made (0 for a repeat answered
    /// from its `Idempotency-Key`): what its work was proportional to.
    package var textCount: Int
}
