import Metrics
import Synchronization

/// `batchdiff_requests_total` by route, method and status: each series is made through
/// swift-metrics once, then counted without asking the metrics backend again.
final class RequestCounters: Sendable {
    private struct Series: Hashable {
        var route: String
        var method: String
        var status: Int
    }

    private let counters = Mutex<[Series: Counter]>([:])

    /// Counts one answered request.
    func count(route: String, method: String, status: Int) {
        let series = Series(route: route, method: method, status: status)
        let counter = counters.withLock { counters in
            if let counter = counters[series] { return counter }
            let counter = Counter(label: "batchdiff_requests_total", dimensions: [
                ("route", route), ("method", method), ("status", String(status)),
            ])
            counters[series] = counter
            return counter
        }
        counter.increment()
    }
}
