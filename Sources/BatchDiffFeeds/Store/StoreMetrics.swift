import Metrics

/// What a durable store records through swift-metrics: how long its calls take, how many
/// failed, and how often it connected again after losing its database.
package struct StoreMetrics: Sendable {
    private let latency: Timer
    private let errors: Counter
    /// Connections to the database opened again after one was lost.
    package let reconnects: Counter

    /// Metrics of the store named `store` (`sqlite`, `postgres`), its dimension.
    package init(store: String) {
        latency = Timer(label: "batchdiff_store_call_seconds", dimensions: [("store", store)])
        errors = Counter(label: "batchdiff_store_errors_total", dimensions: [("store", store)])
        reconnects = Counter(label: "batchdiff_store_reconnects_total", dimensions: [("store", store)])
    }

    /// Records one call that started at `start`, and whether it failed.
    package func record(since start: ContinuousClock.Instant, failed: Bool) {
        let elapsed = (ContinuousClock.now - start).components
        latency.recordNanoseconds(elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000)
        if failed { errors.increment() }
    }
}
