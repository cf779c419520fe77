import Metrics

/// The feed core's metrics, recorded through swift-metrics: whatever backend the process
/// bootstraps (Prometheus on `/metrics` in `batchdiff serve`; none in tests) reads them.
struct FeedMetrics: Sendable {
    /// `changes` answers made by a diff.
    let answersComputed = Counter(label: "batchdiff_feed_answers_computed_total")
    /// `changes` answers served from one already made (kept, or made for another client).
    let answersReused = Counter(label: "batchdiff_feed_answers_reused_total")
    /// Window answers by the whole collection's batch they were seen through
    /// (docs/feeds.md §5.3): a whole answer kept (with the write, or for another client),
    /// the batches kept with the versions since the client's, or the whole answer asked for
    /// (a diff of the whole versions, unless another window asked it first).
    let windowBatches = Dictionary(uniqueKeysWithValues: WindowBatchSource.allCases.map {
        ($0, Counter(label: "batchdiff_feed_window_batches_total", dimensions: [("through", $0.rawValue)]))
    })
    /// Versions whose rows were read whole into the order patches, windows and pages
    /// read (``PatchRows``), by what needed them: a read or a patch that found none kept,
    /// or a write of a whole version over rows that were kept (so the next read finds them).
    let rowsReadWhole = Dictionary(uniqueKeysWithValues: RowsReadWholeFor.allCases.map {
        ($0, Counter(label: "batchdiff_feed_rows_read_whole_total", dimensions: [("for", $0.rawValue)]))
    })
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

/// What a window answer's batch was seen through (``FeedMetrics/windowBatches``).
enum WindowBatchSource: String, CaseIterable, Sendable {
    case kept, versions, whole
}

/// What a version's rows were read whole for (``FeedMetrics/rowsReadWhole``): a read of the
/// latest, a write, or where a window's anchor stood in an older version (when the batches
/// since do not say: it was inserted, or changed and moved).
enum RowsReadWholeFor: String, CaseIterable, Sendable {
    case read, write, anchor
}
