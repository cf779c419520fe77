import BatchDiffJSON
import Gzip
import Synchronization

/// One feed of the ``MemoryFeedStore``: its latest snapshot whole, and each version before
/// it as its text's change from the next one (``StoredVersion``).
final class MemoryFeed: Sendable {
    let settings: FeedSettings
    private let state: Mutex<State>
    /// Where the feed adds the change in its bytes, in its floor (its bytes with only the
    /// latest version left) and in its versions, so the store's totals need no walk.
    private let total: RunningTotal
    private let floors: RunningTotal
    private let versionTotal: RunningTotal

    private struct State {
        var latest: Snapshot
        /// Every retained version, oldest first; the last is the latest.
        var versions: [StoredVersion] = []
        /// The bytes of `versions`, kept as they change.
        var versionBytes = 0
        /// The bytes of the changes kept since the newest version kept whole (or the first).
        var chainBytes = 0
        var deleted = false
        /// The bytes, the floor and the versions last added to the store's totals for this feed.
        var countedBytes = 0
        var countedFloor = 0
        var countedVersions = 0

        /// Bytes held, estimated; none once the feed is deleted.
        var byteEstimate: Int { deleted ? 0 : latest.byteEstimate + versionBytes }

        /// The most the bytes can be once only the latest version is left.
        var floorByteEstimate: Int { deleted ? 0 : MemoryFeed.floorByteEstimate(of: latest) }
    }

    /// A feed whose first version is `first`.
    init(settings: FeedSettings, first: Snapshot, sequence: Int, total: RunningTotal, floors: RunningTotal, versions: RunningTotal) {
        self.settings = settings
        self.total = total
        self.floors = floors
        versionTotal = versions
        state = Mutex(State(latest: first))
        mutate { state in
            state.versions.append(StoredVersion(number: first.version, sequence: sequence))
            state.versionBytes = StoredVersion.recordBytes
        }
    }

    var latest: Snapshot? { state.withLock { $0.deleted ? nil : $0.latest } }

    /// Stores `version` (numbered `previous + 1`) as the next version when the latest is
    /// still `previous`, which is kept from now on as its change from it, or whole
    /// (compressed) when ``ChangeChain/inMemory`` says so. Both are made outside the lock.
    func append(_ version: NewVersion, after previous: Int, sequence: Int) -> Bool {
        precondition(version.snapshot.version == previous + 1, "a feed's versions follow one another")
        let found = state.withLock { $0.latest.version == previous && !$0.deleted ? ($0.latest, $0.chainBytes) : nil }
        guard let (replaced, chainBytes) = found else { return false }
        let change = version.backwardDelta(to: replaced).encoded
        let keepsChange = ChangeChain.inMemory.keepsChange(chainBytes: chainBytes + change.count, textCount: replaced.textCount)
        let kept: KeptText = keepsChange ? .change(change) : .whole(Gzip.compress(replaced.bytes))
        return mutate { state in
            guard !state.deleted, state.latest.version == previous else { return false }
            state.latest = version.snapshot
            state.versions[state.versions.count - 1].text = kept
            state.versionBytes += kept.bytes.capacity
            if case .whole = kept { state.chainBytes = 0 } else { state.chainBytes += change.count }
            var stored = StoredVersion(number: version.snapshot.version, sequence: sequence, batch: version.storedBatch)
            if let answer = version.keptAnswer { stored.keptAnswers.append(answer) }
            state.versionBytes += stored.byteEstimate
            state.versions.append(stored)
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

    /// Keeps `answer` with its version while that version is retained, within the answers
    /// a version keeps.
    func keep(_ answer: KeptAnswer) {
        mutate { state in
            guard !state.deleted, let index = state.versions.firstIndex(where: { $0.number == answer.version }),
                  state.versions[index].keptAnswers.count < KeptAnswer.unchangedPerVersion
            else { return }
            state.versionBytes -= state.versions[index].byteEstimate
            state.versions[index].keptAnswers.append(answer)
            state.versionBytes += state.versions[index].byteEstimate
        }
    }

    /// Version `number` whole, if retained: the latest as it is, an older one rebuilt from
    /// the nearest newer text kept whole (or the latest's) by the changes down to it
    /// (composed into one, then applied, outside the lock) and read again.
    func snapshot(at number: Int) throws(FeedError) -> Snapshot? {
        let found = state.withLock { state -> (latest: Snapshot, whole: [UInt8]?, changes: [[UInt8]])? in
            guard !state.deleted, let index = state.versions.firstIndex(where: { $0.number == number }) else { return nil }
            var changes: [[UInt8]] = []
            for version in state.versions[index..<(state.versions.count - 1)] {
                switch version.text {
                case .whole(let compressed): return (state.latest, compressed, changes)
                case .change(let change): changes.append(change)
                case nil: break
                }
            }
            return (state.latest, nil, changes)
        }
        guard let found else { return nil }
        if found.whole == nil && found.changes.isEmpty { return found.latest }
        let text: [UInt8]
        do {
            let base = try found.whole.map(Self.inflated) ?? found.latest.bytes
            text = try TextDelta.text(applying: found.changes.reversed().map(TextDelta.init(encoded:)), to: base)
        } catch {
            throw .internalFailure("version \(number) of a feed: its kept text does not read back: \(error)")
        }
        return try Snapshot(text: text, idKey: settings.idKey).numbered(number)
    }

    /// The batches that made versions `since + 1` through `latest`, if `since` is retained
    /// and each keeps one.
    func batches(after since: Int, through latest: Int) -> [[UInt8]]? {
        state.withLock { state in
            guard !state.deleted, let first = state.versions.first, first.number <= since, since <= latest, latest < first.number + state.versions.count else {
                return nil
            }
            return JSONBatch.stored(state.versions[(since + 1 - first.number)..<(latest + 1 - first.number)].map(\.batch), after: since, through: latest)
        }
    }

    /// A text kept gzip-compressed, inflated.
    private static func inflated(_ compressed: [UInt8]) throws -> [UInt8] {
        var text: [UInt8] = []
        try compressed.withUnsafeBytes { try GzipInflater().inflate($0, into: &text, limit: .max) }
        return text
    }

    /// Marks the feed deleted; its bytes leave the store's total.
    func delete() {
        mutate { $0.deleted = true }
    }

    var versionCount: Int { state.withLock { $0.versions.count } }

    /// The store-wide sequence of the oldest version that may be evicted (not the latest).
    var oldestEvictable: Int? { state.withLock { $0.versions.count > 1 ? $0.versions[0].sequence : nil } }

    /// The most the feed's bytes can be once only the latest version is left.
    var floorByteEstimate: Int { state.withLock { $0.floorByteEstimate } }

    /// The most a feed's bytes can be with `latest` as its only version.
    static func floorByteEstimate(of latest: Snapshot) -> Int {
        latest.byteEstimate + StoredVersion.recordBytes
    }

    /// Evicts the oldest version (never the latest); returns whether one went.
    @discardableResult
    func evictOldest() -> Bool {
        mutate { state in
            guard state.versions.count > 1 else { return false }
            state.versionBytes -= state.versions.removeFirst().byteEstimate
            // The new oldest version's batch, from one no longer retained, is never read.
            state.versionBytes -= state.versions[0].batch.capacity
            state.versions[0].batch = []
            return true
        }
    }

    /// Evicts versions past `limit`.
    func trim(toVersions limit: Int) {
        while versionCount > max(1, limit) && evictOldest() {}
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
                let versions = state.deleted ? 0 : state.versions.count
                versionTotal.add(versions - state.countedVersions)
                state.countedVersions = versions
            }
            return body(&state)
        }
    }
}

/// A running total (of bytes, or of versions), shared by the feeds that add to it.
final class RunningTotal: Sendable {
    private let sum = Atomic<Int>(0)

    func add(_ delta: Int) { sum.add(delta, ordering: .relaxed) }

    var value: Int { sum.load(ordering: .relaxed) }
}
