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
    func put(
        id: String, idKey: String?, document: JSONDocument, precondition: (Int?) throws(Problem) -> Void
    ) throws(Problem) -> Feed.Write {
        let feed: Feed
        let created: Bool
        if let existing = self.feed(id) {
            if let idKey, idKey != existing.idKey {
                throw Problem.wrongShape("feed \(id) uses idKey \(existing.idKey.debugDescription); it cannot change to \(idKey.debugDescription)")
            }
            feed = existing
            created = false
        } else {
            try precondition(nil)
            let snapshot = try Self.snapshot(version: 1, document: document, idKey: idKey ?? "id")
            let fresh = Feed(id: id, idKey: idKey ?? "id", first: snapshot, sequence: nextSequence(), counters: counters)
            (feed, created) = feeds.withLock { feeds in
                if let raced = feeds[id] { return (raced, false) }
                feeds[id] = fresh
                return (fresh, true)
            }
            if created {
                enforceMemoryLimit()
                return Feed.Write(version: 1, changed: true, body: Self.firstVersionBody(feed: id, snapshot: snapshot))
            }
        }
        let snapshot = try Self.snapshot(version: 0, document: document, idKey: feed.idKey)
        let write = try feed.write(
            bytes: document.bytes, collection: snapshot.collection, fingerprint: snapshot.fingerprint, sequence: nextSequence(),
            precondition: { version throws(Problem) in try precondition(version) }
        )
        feed.trim(toVersions: maxVersions)
        enforceMemoryLimit()
        return write
    }

    private static func snapshot(version: Int, document: JSONDocument, idKey: String) throws(Problem) -> Snapshot {
        do {
            let collection = try document.root.collection(idKey: idKey, path: "body")
            return Snapshot(version: version, bytes: document.bytes, collection: collection, fingerprint: document.root.fingerprint)
        } catch {
            throw Problem.wrongShape(error)
        }
    }

    /// The answer to the first write of a feed: the batch from the empty collection.
    private static func firstVersionBody(feed: String, snapshot: Snapshot) -> [UInt8] {
        var output = JSONOutput()
        output.writeHeader(feed: feed, version: 1, changed: true)
        output.batchMembers(try! JSONBatch(from: snapshot.empty, to: snapshot.collection, options: .init()))
        output.raw("}")
        return output.bytes
    }

    /// Removes feed `id`; returns whether it existed.
    func delete(_ id: String) -> Bool {
        guard let feed = feeds.withLock({ $0.removeValue(forKey: id) }) else { return false }
        feed.delete()
        return true
    }

    /// Evicts the oldest versions, across feeds, until all feeds fit in the byte limit
    /// (a feed's latest version always stays).
    private func enforceMemoryLimit() {
        while byteEstimate > maxBytes {
            let candidates = all.compactMap { feed in feed.oldestEvictable.map { (feed, $0) } }
            guard let oldest = candidates.min(by: { $0.1 < $1.1 }) else { return }
            oldest.0.evictOldest()
        }
    }

    var byteEstimate: Int { all.reduce(0) { $0 + $1.byteEstimate } }

    /// Answers every parked long poll now, and later ones at once (at shutdown).
    func releaseWaiters() {
        for feed in all { feed.releaseWaiters(closing: true) }
    }
}

