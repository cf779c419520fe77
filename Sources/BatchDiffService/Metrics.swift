import Synchronization

/// Request counters, a latency histogram and byte counts, written in the Prometheus text
/// format; feed gauges are added by the caller when the page is rendered.
final class Metrics: Sendable {
    private struct State {
        var requests: [Key: Int] = [:]
        var latencyBuckets = [Int](repeating: 0, count: Metrics.bounds.count)
        var latencyCount = 0
        var latencySum = 0.0
        var bytesIn = 0
        var bytesOut = 0
    }

    private struct Key: Hashable {
        var route: String
        var method: String
        var status: Int
    }

    /// Upper bounds of the latency buckets, in seconds.
    static let bounds: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
    private let state = Mutex(State())

    func record(route: String, method: String, status: Int, seconds: Double, bytesIn: Int, bytesOut: Int) {
        state.withLock { state in
            state.requests[Key(route: route, method: method, status: status), default: 0] += 1
            for (index, bound) in Self.bounds.enumerated() where seconds <= bound { state.latencyBuckets[index] += 1 }
            state.latencyCount += 1
            state.latencySum += seconds
            state.bytesIn += bytesIn
            state.bytesOut += bytesOut
        }
    }

    /// The metrics page, with `counters` and `gauges` (name, help, value) appended.
    func render(counters: [(name: String, help: String, value: Int)], gauges: [(name: String, help: String, value: Int)]) -> String {
        let state = state.withLock { $0 }
        var lines: [String] = []
        lines.append("# HELP batchdiff_requests_total Requests answered, by route, method and status.")
        lines.append("# TYPE batchdiff_requests_total counter")
        for (key, count) in state.requests.sorted(by: { ($0.key.route, $0.key.method, $0.key.status) < ($1.key.route, $1.key.method, $1.key.status) }) {
            lines.append("batchdiff_requests_total{route=\"\(key.route)\",method=\"\(key.method)\",status=\"\(key.status)\"} \(count)")
        }
        lines.append("# HELP batchdiff_request_duration_seconds Time from a request's first byte to its answer.")
        lines.append("# TYPE batchdiff_request_duration_seconds histogram")
        for (bound, count) in zip(Self.bounds, state.latencyBuckets) {
            lines.append("batchdiff_request_duration_seconds_bucket{le=\"\(bound)\"} \(count)")
        }
        lines.append("batchdiff_request_duration_seconds_bucket{le=\"+Inf\"} \(state.latencyCount)")
        lines.append("batchdiff_request_duration_seconds_sum \(state.latencySum)")
        lines.append("batchdiff_request_duration_seconds_count \(state.latencyCount)")
        lines.append("# HELP batchdiff_received_bytes_total Request body bytes received.")
        lines.append("# TYPE batchdiff_received_bytes_total counter")
        lines.append("batchdiff_received_bytes_total \(state.bytesIn)")
        lines.append("# HELP batchdiff_sent_bytes_total Response body bytes sent.")
        lines.append("# TYPE batchdiff_sent_bytes_total counter")
        lines.append("batchdiff_sent_bytes_total \(state.bytesOut)")
        for (kind, values) in [("counter", counters), ("gauge", gauges)] {
            for value in values {
                lines.append("# HELP \(value.name) \(value.help)")
                lines.append("# TYPE \(value.name) \(kind)")
                lines.append("\(value.name) \(value.value)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
