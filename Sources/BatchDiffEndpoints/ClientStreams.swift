import Metrics
import Synchronization

/// The parked long polls and event streams of each client, kept within a limit per
/// client (`--max-streams-per-client`): a client is a signed token's subject, else its
/// token, else its address (docs/security.md), compared by bytes. Refusals are counted by reason alone: a
/// label per client would grow the metrics page without bound.
final class ClientStreams: Sendable {
    private let counts = Mutex<[[UInt8]: Int]>([:])
    private let limit: Int?
    private let refusals = Counter(label: "batchdiff_refusals_total", dimensions: [("reason", "streams_per_client")])

    /// Streams kept to `limit` per client; no limit when `nil`.
    init(limit: Int?) {
        self.limit = limit
    }

    /// Counts one more stream of `client`: `false` (and counted as refused) when it has
    /// `limit` already.
    func enter(_ client: [UInt8]) -> Bool {
        guard let limit else { return true }
        let entered = counts.withLock { counts in
            guard counts[client, default: 0] < limit else { return false }
            counts[client, default: 0] += 1
            return true
        }
        if !entered { refusals.increment() }
        return entered
    }

    /// Counts one stream of `client` fewer.
    func leave(_ client: [UInt8]) {
        guard limit != nil else { return }
        counts.withLock { counts in
            let left = counts[client, default: 1] - 1
            counts[client] = left > 0 ? left : nil
        }
    }
}
