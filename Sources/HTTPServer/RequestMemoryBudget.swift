import Metrics
import Synchronization

/// The memory that requests in flight may use for their bodies and the state a service
/// builds from them (a parsed document, say), in bytes: each body byte is counted
/// `bytesPerBodyByte` times. A request whose share does not fit is refused (503) rather
/// than let the process run out of memory. One alone always fits, so any request within
/// the body limit can be served when the server is otherwise idle (it is counted as the
/// whole budget then); and small requests, of a sixty-fourth of the budget at most, may
/// use an eighth more, so they go on while a large one is in flight. Metrics:
/// `batchdiff_request_bytes_in_flight` (reserved now) and
/// `batchdiff_requests_refused_busy_total`.
final class RequestMemoryBudget: Sendable {
    /// The bytes the budget allows at once.
    let limit: Int
    /// The bytes one body byte costs while its request is in flight.
    let bytesPerBodyByte: Int
    /// Bytes reserved now; the gauge is recorded under the same lock, so it never lags.
    private let used = Mutex<Int>(0)
    private let inFlightGauge = Gauge(label: "batchdiff_request_bytes_in_flight")
    private let refusals = Counter(label: "batchdiff_requests_refused_busy_total")

    init(limit: Int, bytesPerBodyByte: Int) {
        self.limit = limit
        self.bytesPerBodyByte = bytesPerBodyByte
    }

    /// Reserves the share of `bodyBytes` more body bytes for a request that holds `held`
    /// bytes already, and returns the bytes reserved (a request alone is never counted
    /// past the budget), or `nil` (nothing reserved) when it does not fit beside the
    /// requests in flight.
    func reserve(bodyBytes: Int, held: Int) -> Int? {
        let product = bodyBytes.multipliedReportingOverflow(by: bytesPerBodyByte)
        let share = min(product.overflow ? limit : product.partialValue, max(0, limit - held))
        let room = held + share <= limit / 64 ? limit + limit / 8 : limit
        let reserved = used.withLock { used -> Bool in
            // Alone: no other request holds anything.
            guard used == held || used + share <= room else { return false }
            used += share
            inFlightGauge.record(used)
            return true
        }
        guard reserved else {
            refusals.increment()
            return nil
        }
        return share
    }

    /// Gives back `bytes` that ``reserve(bodyBytes:)`` reserved.
    func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        used.withLock { used in
            used -= bytes
            inFlightGauge.record(used)
        }
    }
}
