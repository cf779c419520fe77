import Metrics
import Synchronization

/// Writes to one feed take turns, in the order they ask (docs/feeds.md §3.7): a write waits,
/// holding no thread, until the writes to its feed that asked before it are done. Writes to
/// different feeds do not wait for each other. Metric: `batchdiff_feed_writes_total`, the
/// writes that have asked for their turn (so a test knows one has arrived).
final class WriteTurns: Sendable {
    /// The writes waiting for each feed that has one under way.
    private let waiting = Mutex<[FeedID: [CheckedContinuation<Void, Never>]]>([:])
    private let asked = Counter(label: "batchdiff_feed_writes_total")

    /// Runs `write` in its turn for feed `id`.
    func inTurn<Value, Failure: Error>(for id: FeedID, _ write: () async throws(Failure) -> Value) async throws(Failure) -> Value {
        await take(id)
        defer { pass(id) }
        return try await write()
    }

    private func take(_ id: FeedID) async {
        asked.increment()
        await withCheckedContinuation { (turn: CheckedContinuation<Void, Never>) in
            let now = waiting.withLock { waiting in
                guard waiting[id] != nil else {
                    waiting[id] = []
                    return true
                }
                waiting[id]!.append(turn)
                return false
            }
            if now { turn.resume() }
        }
    }

    private func pass(_ id: FeedID) {
        let next = waiting.withLock { waiting -> CheckedContinuation<Void, Never>? in
            guard let queue = waiting[id], !queue.isEmpty else {
                waiting[id] = nil
                return nil
            }
            return waiting[id]!.removeFirst()
        }
        next?.resume()
    }
}
