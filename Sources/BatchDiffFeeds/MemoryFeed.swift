import BatchDiffJSON
import Gzip
import Synchronization

/// One feed of the ``MemoryFeedStore``: its latest snapshot and the versions before it as
/// fingerprints, interned in a pool so that versions sharing rows share their storage.
final class MemoryFeed: Sendable {
    let settings: FeedSettings
    private let state: Mutex<State>
    /// Where the feed adds the change in its bytes, and in its floor (its bytes with only
    /// the latest version left), so the store's totals need no walk.
    private let total: ByteTotal
    private let floors: ByteTotal

    private struct State {
        var latest: Snapshot
        /// Every retained version, oldest first, as fingerprints; the last is the latest.
        var versions: [StoredVersion] = []
        /// The bytes of `versions`, kept as they change.
        var versionBytes = 0
        var pool = RowPrintPool()
        /// The pool's size after its last compaction; trimming compacts it when it doubles.
        var compactedPoolSize = 0
        var deleted = false
        /// The bytes and the floor last added to the store's totals for this feed.
        var countedBytes = 0
        var countedFloor = 0

        /// Bytes held, estimated; none once the feed is deleted.
        var byteEstimate: Int { deleted ? 0 : latest.byteEstimate + pool.byteEstimate + versionBytes }

        /// The most the bytes can be once only the latest version is left, its pool compacted.
        var floorByteEstimate: Int { deleted ? 0 : MemoryFeed.floorByteEstimate(of: latest) }

        mutating func removeOldest() {
            let oldest = versions.removeFirst()
            versionBytes -= oldest.byteEstimate
        }

        mutating func compactPool() {
            pool.compact(&versions)
            compactedPoolSize = pool.prints.count
        }
    }

    /// A feed whose first version is `first`.
    init(settings: FeedSettings, first: Snapshot, sequence: Int, total: ByteTotal, floors: ByteTotal) {
        self.settings = settings
        self.total = total
        self.floors = floors
        state = Mutex(State(latest: first))
        mutate { state in
            state.versions.append(StoredVersion(first, sequence: sequence, pool: &state.pool))
            state.versionBytes = state.versions[0].byteEstimate
        }
    }

    var latest: Snapshot? { state.withLock { $0.deleted ? nil : $0.latest } }

    /// Stores `snapshot` (numbered `previous + 1`) as the next version when the latest is
    /// still `previous`, whose text is kept compressed from now on (compressed outside the
    /// lock).
    func append(_ snapshot: Snapshot, after previous: Int, sequence: Int, keeping answer: KeptAnswer?) -> Bool {
        precondition(snapshot.version == previous + 1, "a feed's versions follow one another")
        let previousText = state.withLock { $0.latest.version == previous ? $0.latest.bytes : nil }
        guard let compressed = previousText.map(Gzip.compress) else { return false }
        return mutate { state in
            guard !state.deleted, state.latest.version == previous else { return false }
            state.latest = snapshot
            state.versions[state.versions.count - 1].compressedText = compressed
            var version = StoredVersion(snapshot, sequence: sequence, pool: &state.pool)
            if let answer { version.keptAnswers.append(answer) }
            state.versionBytes += compressed.capacity + version.byteEstimate
            state.versions.append(version)
            return true
        }
    }

    /// The answer kept under `key` with a retained version, if any.
    func keptAnswer(for key: String) -> KeptAnswer? {
        state.withLock { state in
            guard !state.deleted else { return nil }
            return state.versions.lazy.flatMap(\.keptAnswers).first { $0.key == key }
        }
    }

    /// Keeps `answer` with its version while that version is retained.
    func keep(_ answer: KeptAnswer) {
        mutate { state in
            guard !state.deleted, let index = state.versions.firstIndex(where: { $0.number == answer.version }) else { return }
            state.versionBytes -= state.versions[index].byteEstimate
            state.versions[index].keptAnswers.append(answer)
            state.versionBytes += state.versions[index].byteEstimate
        }
    }

    /// Version `number` as the differ reads it, if retained; the collection is rebuilt from
    /// fingerprints outside the lock.
    func collection(at number: Int) -> JSONCollection? {
        let found = state.withLock { state -> (StoredVersion, RowPrintPool)? in
            guard !state.deleted else { return nil }
            return state.versions.first { $0.number == number }.map { ($0, state.pool) }
        }
        return found.map { $0.0.collection($0.1) }
    }

    /// Version `number` whole, if retained: the latest as it is, an older one read again
    /// from its text, inflated (its collection then has spans into that text).
    func snapshot(at number: Int) throws(FeedError) -> Snapshot? {
        let found = state.withLock { state -> (latest: Snapshot?, compressed: [UInt8]?) in
            guard !state.deleted else { return (nil, nil) }
            if state.latest.version == number { return (state.latest, nil) }
            return (nil, state.versions.first { $0.number == number }?.compressedText)
        }
        if let latest = found.latest { return latest }
        guard let compressed = found.compressed else { return nil }
        let inflater = GzipInflater()
        var text: [UInt8] = []
        do {
            try compressed.withUnsafeBytes { try inflater.inflate($0, into: &text, limit: .max) }
        } catch {
            throw .internalFailure("version \(number) of a feed: its kept text does not inflate: \(error)")
        }
        return try Snapshot(text: text, idKey: settings.idKey).numbered(number)
    }

    /// Marks the feed deleted; its bytes leave the store's total.
    func delete() {
        mutate { $0.deleted = true }
    }

    var versionCount: Int { state.withLock { $0.versions.count } }

    /// The store-wide sequence of the oldest version that may be evicted (not the latest).
    var oldestEvictable: Int? { state.withLock { $0.versions.count > 1 ? $0.versions[0].sequence : nil } }

    /// The most the feed's bytes can be once only the latest version is left, its pool
    /// compacted.
    var floorByteEstimate: Int { state.withLock { $0.floorByteEstimate } }

    /// The most a feed's bytes can be with `latest` as its only version, its pool compacted.
    static func floorByteEstimate(of latest: Snapshot) -> Int {
        let (rows, sections): (Int, Int?) = switch latest.collection {
        case .list(let items): (items.count, nil)
        case .sectioned(let all): (all.flat.items.count, all.count)
        }
        return latest.byteEstimate + StoredVersion.byteEstimate(rows: rows, sections: sections) + RowPrintPool.byteEstimateBound(count: rows)
    }

    /// Evicts the oldest version (never the latest); returns whether one went. The pool
    /// keeps the evicted rows until ``compact()``.
    @discardableResult
    func evictOldest() -> Bool {
        mutate { state in
            guard state.versions.count > 1 else { return false }
            state.removeOldest()
            return true
        }
    }

    /// Frees the fingerprints no retained version uses any more.
    func compact() {
        mutate { $0.compactPool() }
    }

    /// Evicts versions past `limit`.
    func trim(toVersions limit: Int) {
        var evicted = false
        while versionCount > max(1, limit) && evictOldest() { evicted = true }
        if evicted && state.withLock({ $0.pool.prints.count > 2 * $0.compactedPoolSize + 1024 }) { compact() }
    }

    /// Changes the state under its lock, then adds the change in the feed's bytes to the
    /// store's total.
    private func mutate<Result>(_ body: (inout State) -> Result) -> Result {
        state.withLock { state in
            defer {
                let bytes = state.byteEstimate
                total.add(bytes - state.countedBytes)
                state.countedBytes = bytes
                let floor = state.floorByteEstimate
                floors.add(floor - state.countedFloor)
                state.countedFloor = floor
            }
            return body(&state)
        }
    }
}

/// A running total of bytes, shared by the feeds that add to it.
final class ByteTotal: Sendable {
    private let bytes = Atomic<Int>(0)

    func add(_ delta: Int) { bytes.add(delta, ordering: .relaxed) }

    var value: Int { bytes.load(ordering: .relaxed) }
}
