import Metrics

/// The feed core's metrics, recorded through swift-metrics: whatever backend the process
/// bootstraps (Prometheus on `/metrics` in `batchdiff serve`; none in tests) reads them.
struct FeedMetrics: Sendable {
    /// `changes` answers made by a diff.
    let answersComputed = Counter(label: "batchdiff_feed_answers_computed_total")
    /// `changes` answers served from one already made (kept, or made for another client).
    let answersReused = Counter(label: "batchdiff_feed_answers_reused_total")
    private let feeds = Gauge(label: "batchdiff_feeds")
    private let versions = Gauge(label: "batchdiff_feed_versions")
    private let bytes = Gauge(label: "batchdiff_feed_bytes")
    private let parkedLongPolls = Gauge(label: "batchdiff_long_polls_parked")

    /// Records what the feeds hold now.
    func record(_ statistics: FeedStatistics) {
        feeds.record(statistics.feeds)
        versions.record(statistics.versions)
        bytes.record(statistics.bytes)
        parkedLongPolls.record(statistics.parkedLongPolls)
    }
}
