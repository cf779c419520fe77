import BatchDiff
import BatchDiffJSON
import Synchronization

/// All feeds, in memory, with retention bounded by versions per feed and by total bytes.
final class FeedStore: Sendable {
    private let feeds = Mutex<[String: Feed]>([:])
    private let sequence = Atomic<Int>(0)
    private let maxVersions: Int
    private let maxBytes: Int
    let counters = FeedCounters()

    init(maxVersions: Int, maxBytes: Int) {
        self.maxVersions = maxVersions
        self.maxBytes = maxBytes
    }

    func feed(_ id: String) -> Feed? { feeds.withLock { $0[id] } }

    var all: [Feed] { feeds.withLock { Array($0.values) } }

    private func nextSequence() -> Int { sequence.add(1, ordering: .relaxed).newValue }

    /// Stores a snapshot in feed `id`, creating the feed (version 1) when it is new.
    /// `ifMatch` checks the feed's latest version (`nil` when there is no feed yet).
    func put(id: String, idKey: String?, document: JSONDocument, ifMatch: (Int?) throws(Problem) -> Void) throws(Problem) -> Feed.Write {
        // Twice at most: a feed deleted or created by another request meanwhile is met again.
        for attempt in 1...2 {
            if let existing = feed(id) {
                do {
                    return try write(document, idKey: idKey, to: existing, ifMatch: ifMatch)
                } catch where error.code == "feed_not_found" && attempt == 1 {
                    continue  // deleted meanwhile: this write creates it again
                }
            }
            try ifMatch(nil)
            let snapshot = try Snapshot(version: 0, document: document, idKey: idKey ?? "id")
            let fresh = Feed(id: id, idKey: idKey ?? "id", shape: snapshot.collection, counters: counters)
            let write = try fresh.write(snapshot, sequence: nextSequence(), ifMatch: ifMatch)
            guard feeds.withLock({ feeds in feeds[id] == nil ? { feeds[id] = fresh; return true }() : false }) else {
                fresh.delete()  // another first write won: this one goes into that feed
                continue
            }
            try enforceMemoryLimit(creating: fresh)
            return write
        }
        guard let existing = feed(id) else { throw Problem.feedNotFound(id) }
        return try write(document, idKey: idKey, to: existing, ifMatch: ifMatch)
    }

    private func write(_ document: JSONDocument, idKey: String?, to feed: Feed, ifMatch: (Int?) throws(Problem) -> Void) throws(Problem) -> Feed.Write {
        if let idKey, idKey != feed.idKey {
            throw Problem.wrongShape("feed \(feed.id) uses idKey \(feed.idKey.debugDescription); it cannot change to \(idKey.debugDescription)")
        }
        let write = try feed.write(Snapshot(version: 0, document: document, idKey: feed.idKey), sequence: nextSequence(), ifMatch: ifMatch)
        feed.trim(toVersions: maxVersions)
        try enforceMemoryLimit(creating: nil)
        return write
    }

    /// Removes feed `id`; returns whether it existed.
    func delete(_ id: String) -> Bool {
        guard let feed = feeds.withLock({ $0.removeValue(forKey: id) }) else { return false }
        feed.delete()
        return true
    }

    /// Brings the feeds within the byte limit: first the answers kept for reuse go, then
    /// the oldest versions across feeds, a tenth at a time (a feed's latest always stays).
    /// A feed just `created` that would not fit even with every feed cut down to its
    /// latest is removed again (507) before anything else is touched, so a refused write
    /// costs the other feeds nothing and the store never holds more than it may.
    private func enforceMemoryLimit(creating created: Feed?) throws(Problem) {
        guard byteEstimate > maxBytes else { return }
        let feeds = all
        func refuse(_ created: Feed) -> Problem {
            _ = delete(created.id)
            return Problem.feedStorageFull(created.id, limit: maxBytes)
        }
        if let created, feeds.reduce(0, { $0 + $1.floorByteEstimate }) > maxBytes { throw refuse(created) }
        feeds.forEach { $0.dropAnswers() }
        while byteEstimate > maxBytes {
            let evictable = feeds.reduce(0) { $0 + $1.versionCount - 1 }
            guard evictable > 0 else {
                feeds.forEach { $0.compact() }  // pools trimmed without compacting may still hold evicted rows
                break
            }
            var touched: [ObjectIdentifier: Feed] = [:]
            for _ in 0..<max(1, evictable / 10) {
                guard let oldest = feeds.compactMap({ feed in feed.oldestEvictable.map { (feed, $0) } }).min(by: { $0.1 < $1.1 }) else { break }
                oldest.0.evictOldest()
                touched[ObjectIdentifier(oldest.0)] = oldest.0
            }
            touched.values.forEach { $0.compact() }
        }
        if let created, byteEstimate > maxBytes { throw refuse(created) }
    }

    /// Bytes all feeds hold, estimated.
    var byteEstimate: Int { counters.bytesHeld }

    /// Answers every parked long poll now, and later ones at once (at shutdown).
    func releaseWaiters() {
        for feed in all { feed.releaseWaiters(closing: true) }
    }
}
