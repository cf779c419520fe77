import BatchDiffJSON
import HeapModule
import Synchronization

/// Feeds in this process's memory (the default store): nothing survives the process.
///
/// Retention is bounded by versions per feed and by the bytes all feeds hold; past the
/// byte limit the oldest versions across feeds go first, never a feed's latest
/// (docs/feeds.md §7).
package final class MemoryFeedStore: FeedStore {
    private let feeds = Mutex(FeedIndex<MemoryFeed>())
    private let sequence = Atomic<Int>(0)
    private let total = RunningTotal()
    /// The feeds' bytes if each were cut down to its latest version.
    private let floors = RunningTotal()
    /// The versions the feeds hold.
    private let versions = RunningTotal()
    private let maxVersions: Int
    private let maxBytes: Int

    /// A store that keeps up to `maxVersions` versions per feed and `maxBytes` bytes in all.
    package init(maxVersions: Int, maxBytes: Int) {
        self.maxVersions = maxVersions
        self.maxBytes = maxBytes
    }

    private func feed(_ id: FeedID) -> MemoryFeed? { feeds.withLock { $0[id] } }

    private var all: [MemoryFeed] { feeds.withLock { Array($0.byID.values) } }

    private func nextSequence() -> Int { sequence.add(1, ordering: .relaxed).newValue }

    package func latest(of id: FeedID) throws(FeedError) -> StoredSnapshot? {
        guard let feed = feed(id), let latest = feed.latest else { return nil }
        return StoredSnapshot(settings: feed.settings, snapshot: latest)
    }

    /// An older version is read again from its text on a worker.
    package func snapshot(at version: Int, of id: FeedID) async throws(FeedError) -> Snapshot? {
        guard let feed = feed(id) else { return nil }
        return try await Workers.run { () throws(FeedError) in try feed.snapshot(at: version) }
    }

    package func batches(of id: FeedID, after since: Int, through latest: Int) throws(FeedError) -> [[UInt8]]? {
        feed(id)?.batches(after: since, through: latest)
    }

    /// Making the version before into a change and evicting are CPU work: done on a worker,
    /// off the caller's (cooperative) thread.
    package func append(_ version: NewVersion, to id: FeedID, settings: FeedSettings, after previous: Int?) async throws(FeedError) -> Bool {
        try await Workers.run { () throws(FeedError) in try self.appendNow(version, to: id, settings: settings, after: previous) }
    }

    package func keptAnswer(for key: String, of id: FeedID) throws(FeedError) -> KeptAnswer? {
        feed(id)?.keptAnswer(for: key)
    }

    package func keep(_ answer: KeptAnswer, for id: FeedID) throws(FeedError) {
        feed(id)?.keep(answer)
    }

    private func appendNow(_ version: NewVersion, to id: FeedID, settings: FeedSettings, after previous: Int?) throws(FeedError) -> Bool {
        let snapshot = version.snapshot
        // A write that could not fit even with every feed cut down to its latest version is
        // refused before anything is touched: nothing stored, nothing evicted.
        let replaced = previous == nil ? 0 : feed(id)?.floorByteEstimate ?? 0
        guard floors.value - replaced + MemoryFeed.floorByteEstimate(of: snapshot) <= maxBytes else {
            throw .storageFull(id, limit: maxBytes)
        }
        if let previous {
            guard let feed = feed(id), feed.append(version, after: previous, sequence: nextSequence()) else { return false }
            feed.trim(toVersions: maxVersions)
        } else {
            let fresh = MemoryFeed(settings: settings, first: snapshot, sequence: nextSequence(), total: total, floors: floors, versions: versions)
            let inserted = feeds.withLock { $0.insert(fresh, as: id) }
            guard inserted else {
                fresh.delete()  // another first write won
                return false
            }
        }
        evictToByteLimit()
        return true
    }

    package func delete(_ id: FeedID) throws(FeedError) -> Bool {
        guard let feed = feeds.withLock({ $0.remove(id) }) else { return false }
        feed.delete()
        return true
    }

    package func list(after: FeedID?, prefix: String, limit: Int) throws(FeedError) -> FeedPage {
        let (page, more) = feeds.withLock { index in
            let (ids, more) = index.page(after: after, prefix: prefix, limit: limit)
            return (ids.compactMap { id in index[id].map { (id, $0) } }, more)
        }
        return FeedPage(feeds: page.compactMap { id, feed in feed.latest.map { FeedSummary(id: id, version: $0.version) } }, more: more)
    }

    /// Nothing: no other process writes this store (this process's writes wake their own
    /// long polls).
    package func observe(_ observer: @escaping @Sendable (FeedChange) -> Void) {}

    package var bytesInMemory: Int { total.value }

    /// From running totals: no walk over every feed (a metrics page reads them).
    package var statistics: FeedStoreStatistics {
        FeedStoreStatistics(feeds: feeds.withLock { $0.count }, versions: versions.value, bytesInMemory: total.value)
    }

    /// Brings the feeds within the byte limit: the oldest versions across feeds go, by write
    /// order (a feed's latest always stays), at least a tenth of those evictable at a time,
    /// so that the walk over every feed this takes is paid once for many writes. The feeds
    /// stand in a heap by their oldest evictable version: each eviction takes the store's
    /// oldest, and puts its feed back by its next.
    private func evictToByteLimit() {
        guard total.value > maxBytes else { return }
        var evictable = 0
        var oldestFirst = Heap<OldestVersion>()
        for feed in all {
            evictable += feed.versionCount - 1
            if let sequence = feed.oldestEvictable { oldestFirst.insert(OldestVersion(sequence: sequence, feed: feed)) }
        }
        var evicted = 0
        while total.value > maxBytes || evicted < evictable / 10, let oldest = oldestFirst.popMin() {
            oldest.feed.evictOldest()
            evicted += 1
            if let next = oldest.feed.oldestEvictable { oldestFirst.insert(OldestVersion(sequence: next, feed: oldest.feed)) }
        }
    }

    /// A feed by the store-wide sequence of its oldest evictable version.
    private struct OldestVersion: Comparable {
        let sequence: Int
        let feed: MemoryFeed

        static func < (lhs: Self, rhs: Self) -> Bool { lhs.sequence < rhs.sequence }
        static func == (lhs: Self, rhs: Self) -> Bool { lhs.sequence == rhs.sequence }
    }
}
