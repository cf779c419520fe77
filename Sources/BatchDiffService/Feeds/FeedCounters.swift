import Synchronization

/// How `changes?since=` questions were answered, across feeds: by a diff, or by an answer
/// already computed for the same (since, latest).
final class FeedCounters: Sendable {
    private let computed = Atomic<Int>(0)
    private let reused = Atomic<Int>(0)

    func recordComputed() { computed.add(1, ordering: .relaxed) }
    func recordReused() { reused.add(1, ordering: .relaxed) }

    var answersComputed: Int { computed.load(ordering: .relaxed) }
    var answersReused: Int { reused.load(ordering: .relaxed) }
}
