import Synchronization

/// Counts across feeds: how `changes?since=` questions were answered (by a diff, or by an
/// answer already computed for the same since and latest), and the bytes feeds hold.
final class FeedCounters: Sendable {
    private let computed = Atomic<Int>(0)
    private let reused = Atomic<Int>(0)
    private let bytes = Atomic<Int>(0)

    func recordComputed() { computed.add(1, ordering: .relaxed) }
    func recordReused() { reused.add(1, ordering: .relaxed) }

    var answersComputed: Int { computed.load(ordering: .relaxed) }
    var answersReused: Int { reused.load(ordering: .relaxed) }

    /// Adds a feed's change in bytes held (negative when it shrinks).
    func addBytes(_ delta: Int) { bytes.add(delta, ordering: .relaxed) }

    /// The bytes all feeds hold, estimated.
    var bytesHeld: Int { bytes.load(ordering: .relaxed) }
}
