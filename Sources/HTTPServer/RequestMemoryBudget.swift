import Metrics
import Synchronization

/// The memory that requests in flight may use for their bodies and the state a service
/// builds from them (a parsed document, say), in bytes: each body byte is counted
/// `bytesPerBodyByte` times. A request whose share does not fit is refused (503) rather
/// than let the process run out of memory; one alone always fits, so any request within
/// the body limit can be served when the server is otherwise idle. Metrics:
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

    /// Reserves the share of `bodyBytes` more body bytes; `false` (nothing reserved) when
    /// it does not fit beside the requests already in flight.
    func reserve(bodyBytes: Int) -> Bool {
        let share = bodyBytes.multipliedReportingOverflow(by: bytesPerBodyByte)
        guard !share.overflow else { return false }
        var current = used.load(ordering: .relaxed)
        while true {
            guard current == 0 || current + share.partialValue <= limit else {
                refusals.increment()
                return false
            }
            let (exchanged, original) = used.compareExchange(expected: current, desired: current + share.partialValue, ordering: .relaxed)
            if exchanged {
                inFlightGauge.record(current + share.partialValue)
                return true
            }
            current = original
        }
    }

    /// Gives back what `bodyBytes` body bytes reserved.
    func release(bodyBytes: Int) {
        guard bodyBytes > 0 else { return }
        inFlightGauge.record(used.subtract(bodyBytes * bytesPerBodyByte, ordering: .relaxed).newValue)
    }
}
