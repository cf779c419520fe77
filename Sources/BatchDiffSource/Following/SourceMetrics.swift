import Metrics

/// What the follower records through swift-metrics (docs/sources.md §7).
struct SourceMetrics: Sendable {
    /// Bytes of WAL between the server's end and what the follower applied.
    let lagBytes = Gauge(label: "batchdiff_source_lag_bytes")
    /// Seconds between a transaction's commit and its versions stored, at the last one.
    let lagSeconds = Gauge(label: "batchdiff_source_lag_seconds")
    let transactions = Counter(label: "batchdiff_source_transactions_total")
    let rowChanges = Counter(label: "batchdiff_source_row_changes_total")
    let feedsMade = Counter(label: "batchdiff_source_feeds_made_total")
    let feedsDropped = Counter(label: "batchdiff_source_feeds_dropped_total")
    let reconnects = Counter(label: "batchdiff_source_reconnects_total")
    /// The time a transaction takes to apply: its feeds' versions made and stored.
    let applyTime = Timer(label: "batchdiff_source_apply_seconds")
    /// Whether the replication stream is up (1) or not (0).
    let up = Gauge(label: "batchdiff_source_up")
}
