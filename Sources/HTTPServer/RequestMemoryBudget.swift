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
    private let used = Atomic<Int>(0)
    private let inFlightGauge = Gauge(label: "batchdiff_request_bytes_in_flight")
    private let refusals = Counter(label: "batchdiff_requests_refused_busy_total")

    init(limit: Int, bytesPerBodyByte: Int) {
        self.limit = limit
        self.bytesPerBodyByte = bytesPerBodyByte
    }

    /// Reserves the share of `bodyBytes` more body bytes and returns the bytes reserved,
    /// or `nil` (nothing reserved) when it does not fit beside the requests in flight.
    func reserve(bodyBytes: Int) -> Int? {
        let product = bodyBytes.multipliedReportingOverflow(by: bytesPerBodyByte)
        let share = product.overflow ? limit : min(product.partialValue, limit)
        let room = share <= limit / 64 ? limit + limit / 8 : limit
        var current = used.load(ordering: .relaxed)
        while true {
            guard current == 0 || current + share <= room else {
                refusals.increment()
                return nil
            }
            let (exchanged, original) = used.compareExchange(expected: current, desired: current + share, ordering: .relaxed)
            if exchanged {
                inFlightGauge.record(current + share)
                return share
            }
            current = original
        }
    }

    /// Gives back `bytes` that ``reserve(bodyBytes:)`` reserved.
    func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        inFlightGauge.record(used.subtract(bytes, ordering: .relaxed).newValue)
    }
}
