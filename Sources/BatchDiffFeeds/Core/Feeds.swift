import BatchDiff
import BatchDiffJSON

/// The feed core: versioned snapshots of collections, the batch between any retained
/// version and the latest, answers kept and shared, and long polls (docs/feeds.md).
///
/// Feeds live in a ``FeedStore``; this type adds what every store needs on top: diffs
/// (made on ``Workers``, never on the caller's thread), answers kept for reuse, and long
/// polls woken with each new version, whichever process made it. It knows nothing of
/// HTTP: it answers with JSON bytes and throws ``FeedError``.
package final class Feeds: Sendable {
    let store: any FeedStore
    let answers: AnswerCache
    let longPolls: LongPolls
    let maxBytes: Int
    let metrics = FeedMetrics()
    let series: VersionSeries
    let turns = WriteTurns()
    let rowOrders: RowOrderCache
    /// The clock waits are measured on, and the wall clock.
    package let clock: FeedClock

    /// Feeds kept in `store`; the answers kept for reuse and what the store holds in memory
    /// stay within `maxFeedMemory` bytes, answers being dropped first. Waits are measured
    /// on `clock`, and a new series of versions starts at its wall clock's microseconds
    /// since 1970 or above (``VersionSeries``).
    package init(store: any FeedStore, maxFeedMemory: Int, clock: FeedClock = .system) {
        self.store = store
        self.clock = clock
        maxBytes = maxFeedMemory
        // Row orders take at most a quarter of the room (a list's order about as much as its text).
        let rowOrders = RowOrderCache(budget: maxFeedMemory / 4)
        self.rowOrders = rowOrders
        // Versions kept for long polls to come are the store's latest, whose memory they share.
        longPolls = LongPolls(clock: clock, idleBudget: maxFeedMemory / 16)
        // Answers are kept in what the store leaves of the memory feeds may hold.
        answers = AnswerCache { [store, rowOrders] in maxFeedMemory - store.bytesInMemory - rowOrders.bytes }
        series = VersionSeries(clock: clock)
        // Held weakly: the store holds its observers.
        store.observe { [weak self] change in self?.observed(change) }
    }

    /// What another process sharing the store changed (``FeedStore/observe(_:)``; a
    /// shared store may tell this process's own changes too): long polls waiting on a feed
    /// another process wrote or deleted are woken with its new latest version, read once for
    /// all of them.
    private func observed(_ change: FeedChange) {
        switch change {
        case .appended(let id, let version):
            series.saw(version)
            answers.drop(id, olderThan: version)
            if longPolls.wouldWake(version, of: id) { wakeWithLatest(of: id) }
        case .deleted(let id):
            // Read, not taken as said: the feed may have been created again since.
            answers.drop(id, olderThan: nil)
            if longPolls.areParked(on: id) { wakeWithLatest(of: id) }
        case .missed:
            for id in longPolls.forgetLatest() { wakeWithLatest(of: id) }
        }
    }

    /// Reads feed `id`'s latest version and wakes the long polls on it with it (or with its
    /// deletion, or the store's failure).
    private func wakeWithLatest(of id: FeedID) {
        Task { [store, longPolls] in
            do throws(FeedError) {
                if let latest = try await store.latest(of: id) {
                    longPolls.wake(id, with: latest)
                } else {
                    longPolls.wakeAll(id, with: .deleted)
                }
            } catch {
                longPolls.wakeAll(id, with: .failed(error))
            }
        }
    }

    /// Removes feed `id`; its parked long polls learn it (``FeedError/notFound(_:)``).
    package func delete(_ id: FeedID) async throws(FeedError) {
        rowOrders.drop(id)
        guard try await store.delete(id) else { throw .notFound(id) }
        answers.drop(id, olderThan: nil)
        longPolls.wakeAll(id, with: .deleted)
    }

    /// Every feed with its latest version, in id order: `{"feeds":[{"feed","version"}]}`.
    package func list(after: FeedID?, limit: Int) async throws(FeedError) -> [UInt8] {
        FeedAnswers.list(try await store.list(after: after, limit: limit))
    }

    /// The feeds whose ids `patterns` name (each an exact id, or a prefix), as ``list(after:limit:)``
    /// answers: each pattern's range of ids read from the store's index, merged.
    package func list(after: FeedID?, limit: Int, matching patterns: [(text: String, isPrefix: Bool)]) async throws(FeedError) -> [UInt8] {
        var found: [FeedID: FeedSummary] = [:]
        var more = false
        for pattern in patterns {
            if pattern.isPrefix {
                let page = try await store.list(after: after, prefix: pattern.text, limit: limit)
                for feed in page.feeds { found[feed.id] = feed }
                more = more || page.more
            } else if after.map({ $0.name.utf8.lexicographicallyPrecedes(pattern.text.utf8) }) ?? true {
                // An id is the first of the ids it begins.
                if let first = try await store.list(after: nil, prefix: pattern.text, limit: 1).feeds.first, first.id.name.utf8.elementsEqual(pattern.text.utf8) {
                    found[first.id] = first
                }
            }
        }
        let feeds = found.values.sorted { $0.id < $1.id }
        return FeedAnswers.list(FeedPage(feeds: Array(feeds.prefix(limit)), more: more || feeds.count > limit))
    }

    /// Whether the store answers now (readiness).
    package var isStoreAvailable: Bool { store.isAvailable }

    /// Answers every parked long poll now, and later ones at once (at shutdown).
    package func close() {
        longPolls.close()
    }

    /// What the feeds hold now.
    package var statistics: FeedStatistics {
        let stored = store.statistics
        return FeedStatistics(
            feeds: stored.feeds, versions: stored.versions, bytes: stored.bytesInMemory + answers.bytes + rowOrders.bytes,
            parkedLongPolls: longPolls.count
        )
    }

    /// Records the gauges of what the feeds hold (``statistics``) through swift-metrics; a
    /// metrics page calls it before it is read. Counters are recorded as things happen.
    package func recordGauges() {
        metrics.record(statistics)
    }
}
