import BatchDiff
import BatchDiffJSON
import Dispatch
import HTTPServer
import Synchronization

/// One feed: its latest snapshot, the fingerprints of the versions before it, answers
/// already computed for the latest, and the long polls waiting for the next version.
///
/// Writes are serialized by a lock of their own. Answers to `changes?since=` are computed on
/// the feed's own serial queue and outside the lock, so a long diff holds up neither the
/// server's threads nor the feed's other requests, and a question asked by many clients at
/// once is answered by one diff (the others find it computed).
final class Feed: Sendable {
    let id: String
    let idKey: String
    private let state: Mutex<State>
    /// Serializes writes, so each diff is made against the version it replaces.
    private let writing = Mutex<Void>(())
    private let counters: FeedCounters
    private let answering: DispatchQueue
    /// Bytes of computed answers kept for reuse; past it they are dropped.
    private static let answerCacheLimit = 32 << 20

    private struct State {
        var latest: Snapshot
        /// Versions 1 up to the latest, oldest first, as fingerprints; the oldest may be evicted.
        private(set) var versions: [StoredVersion] = []
        /// The bytes of `versions`, kept as they change.
        private(set) var versionBytes = 0
        var pool = RowPrintPool()
        /// The pool's size after its last compaction; trimming compacts it when it doubles.
        var compactedPoolSize = 0
        /// Answers of `changes?since=N` for the current latest, by N.
        var answers: [Int: [UInt8]] = [:]
        var answerBytes = 0
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
        var deleted = false
        /// Set at shutdown: long polls are answered at once from then on.
        var closing = false
        /// The bytes last added to the store's total for this feed.
        var countedBytes = 0

        /// Bytes held, estimated; none once the feed is deleted.
        var byteEstimate: Int { deleted ? 0 : latest.byteEstimate + pool.byteEstimate + versionBytes + answerBytes }

        mutating func append(_ version: StoredVersion) {
            versions.append(version)
            versionBytes += version.byteEstimate
        }

        /// Removes the oldest version and the answer kept for its clients.
        mutating func removeOldest() {
            let oldest = versions.removeFirst()
            versionBytes -= oldest.byteEstimate
            dropAnswer(since: oldest.number)
        }

        mutating func compactPool() {
            pool.compact(&versions)
            compactedPoolSize = pool.prints.count
        }

        mutating func dropAnswers() {
            answers = [:]
            answerBytes = 0
        }

        mutating func dropAnswer(since: Int) {
            if let answer = answers.removeValue(forKey: since) { answerBytes -= answer.count }
        }

        mutating func keep(_ answer: [UInt8], since: Int) {
            if answerBytes + answer.count > Feed.answerCacheLimit { dropAnswers() }
            answers[since] = answer
            answerBytes += answer.count
        }
    }

    private struct Waiter: Sendable {
        let since: Int
        let pending: PendingResponse
    }

    /// What a write stored, and its answer.
    struct Write: Sendable {
        let version: Int
        let body: [UInt8]
    }

    /// A feed with no version yet (version 0, the empty collection) of `shape`'s shape.
    init(id: String, idKey: String, shape: JSONCollection, counters: FeedCounters) {
        self.id = id
        self.idKey = idKey
        self.counters = counters
        answering = DispatchQueue(label: "batchdiff.feed.answers")
        state = Mutex(State(latest: Snapshot(emptyLike: shape)))
    }

    var latestVersion: Int { state.withLock { $0.latest.version } }
    var latestText: (version: Int, bytes: [UInt8]) { state.withLock { ($0.latest.version, $0.latest.bytes) } }

    /// Stores `snapshot` as the next version unless it equals the latest. `ifMatch` checks
    /// the latest version (`nil` before the first). Writes are serialized by their own lock;
    /// the diff is made outside the state's lock, which is held only to swap versions.
    func write(_ snapshot: Snapshot, sequence: Int, ifMatch: (Int?) throws(Problem) -> Void) throws(Problem) -> Write {
        let (write, woken) = try writing.withLock { _ throws(Problem) -> (Write, [Waiter]) in
            let previous = try state.withLock { state throws(Problem) -> Snapshot in
                guard !state.deleted else { throw Problem.feedNotFound(id) }
                return state.latest
            }
            try ifMatch(previous.version == 0 ? nil : previous.version)
            if previous.version > 0 && previous.fingerprint == snapshot.fingerprint {
                let body = FeedAnswers.write(feed: id, version: previous.version, changed: false, batch: .unchanged(previous.collection))
                return (Write(version: previous.version, body: body), [])
            }
            guard previous.collection.shapeName == snapshot.collection.shapeName else {
                throw Problem.wrongShape("feed \(id) holds \(previous.collection.shapeName); this snapshot is \(snapshot.collection.shapeName)")
            }
            let latest = snapshot.numbered(previous.version + 1)
            let batch = try Self.batch(from: previous.collection, to: latest.collection)
            // Clients at the previous version ask next: their answer is ready with the write.
            let answer = try FeedAnswers.changes(feed: id, from: previous.version, latest: latest, batch: batch)
            counters.recordComputed()
            let body = FeedAnswers.write(feed: id, version: latest.version, changed: true, batch: batch)
            let woken = try mutate { state throws(Problem) -> [Waiter] in
                guard !state.deleted else { throw Problem.feedNotFound(id) }
                state.latest = latest
                state.append(StoredVersion(number: latest.version, sequence: sequence, collection: latest.collection, pool: &state.pool))
                state.dropAnswers()
                state.keep(answer, since: previous.version)
                defer { state.waiters = [:] }
                return Array(state.waiters.values)
            }
            return (Write(version: latest.version, body: body), woken)
        }
        for waiter in woken { release(waiter) }
        return write
    }

    private static func batch(from old: JSONCollection, to new: JSONCollection) throws(Problem) -> JSONBatch {
        do {
            return try JSONBatch(from: old, to: new, options: DiffOptions())
        } catch {
            throw Problem.internalError("a feed's versions of different shapes: \(error)")
        }
    }

    /// The answer to `changes?since=since` if it is computed already.
    func computedAnswer(since: Int) -> [UInt8]? {
        let answer = state.withLock { $0.answers[since] }
        if answer != nil { counters.recordReused() }
        return answer
    }

    /// Answers `changes?since=since` on the feed's queue, through `reply`.
    func answer(since: Int, _ reply: @escaping @Sendable (HTTPResponse) -> Void) {
        answering.async { [self] in
            do {
                reply(.json(200, try changes(since: since)))
            } catch {
                reply(error.response)
            }
        }
    }

    /// The batch from version `since` to the latest, with the values; computed outside the
    /// lock and kept for the next client with the same question.
    private func changes(since: Int) throws(Problem) -> [UInt8] {
        enum Work {
            case answered([UInt8])
            case diff(latest: Snapshot, old: StoredVersion?, pool: RowPrintPool)
        }
        let work = try state.withLock { state throws(Problem) -> Work in
            guard !state.deleted else { throw Problem.feedNotFound(id) }
            if let answer = state.answers[since] { return .answered(answer) }
            let latest = state.latest
            guard since <= latest.version else {
                throw Problem.badQuery("since=\(since) is newer than the latest version of feed \(id), \(latest.version)")
            }
            if since == 0 || since == latest.version { return .diff(latest: latest, old: nil, pool: RowPrintPool()) }
            guard let stored = state.versions.first(where: { $0.number == since }) else {
                throw Problem.versionGone(feed: id, since: since, latest: latest.version)
            }
            return .diff(latest: latest, old: stored, pool: state.pool)
        }
        switch work {
        case .answered(let answer):
            counters.recordReused()
            return answer
        case .diff(let latest, let old, let pool):
            let batch: JSONBatch
            if since == latest.version {
                batch = .unchanged(latest.collection)
            } else {
                let oldCollection = old?.collection(pool) ?? Snapshot(emptyLike: latest.collection).collection
                batch = try Self.batch(from: oldCollection, to: latest.collection)
            }
            let answer = try FeedAnswers.changes(feed: id, from: since, latest: latest, batch: batch)
            counters.recordComputed()
            mutate { state in
                if state.latest.version == latest.version { state.keep(answer, since: since) }
            }
            return answer
        }
    }

    /// Parks a long poll for a version newer than `since`, answered by the next write or
    /// after `wait` with the (empty) batch; answered at once if a newer version is here.
    func park(_ pending: PendingResponse, since: Int, wait: Duration) {
        let parked = state.withLock { state -> Bool in
            guard !state.deleted, !state.closing, state.latest.version == since else { return false }
            state.nextWaiter += 1
            let waiterID = state.nextWaiter
            state.waiters[waiterID] = Waiter(since: since, pending: pending)
            // The deadline finds the waiter gone if a write answered it first (ids are never
            // reused), and holds the feed only weakly.
            let seconds = Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [weak self] in self?.expire(waiterID) }
            return true
        }
        if !parked { answer(since: since) { pending.send($0) } }
    }

    private func expire(_ waiterID: Int) {
        if let waiter = state.withLock({ $0.waiters.removeValue(forKey: waiterID) }) { release(waiter) }
    }

    /// Answers a long poll with what there is now.
    private func release(_ waiter: Waiter) {
        let pending = waiter.pending
        answer(since: waiter.since) { pending.send($0) }
    }

    /// Answers every parked long poll now, with what there is; with `closing`, every later
    /// one too.
    func releaseWaiters(closing: Bool = false) {
        let waiters = state.withLock { state in
            defer { state.waiters = [:] }
            state.closing = state.closing || closing
            return Array(state.waiters.values)
        }
        for waiter in waiters { release(waiter) }
    }

    var waiterCount: Int { state.withLock { $0.waiters.count } }

    /// Marks the feed deleted; parked long polls learn it with 404.
    func delete() {
        mutate { $0.deleted = true }
        releaseWaiters()
    }

    /// Changes the state under its lock, then adds the change in the feed's bytes to the
    /// store's total (``FeedCounters/bytesHeld``), so that total never needs a walk over
    /// every feed.
    private func mutate<Result: Sendable, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        try state.withLock { state throws(Failure) -> Result in
            defer {
                let bytes = state.byteEstimate
                counters.addBytes(bytes - state.countedBytes)
                state.countedBytes = bytes
            }
            return try body(&state)
        }
    }

    /// The most ``byteEstimate`` can be once only the latest version is left, its pool
    /// compacted and no answer kept.
    var floorByteEstimate: Int {
        state.withLock { state in
            let latest = state.versions.last
            return state.latest.byteEstimate + (latest?.byteEstimate ?? 0) + RowPrintPool.byteEstimateBound(count: latest?.rows.count ?? 0)
        }
    }

    var versionCount: Int { state.withLock { $0.versions.count } }

    /// The store-wide sequence of the oldest version that may be evicted (not the latest).
    var oldestEvictable: Int? { state.withLock { $0.versions.count > 1 ? $0.versions[0].sequence : nil } }

    /// Evicts the oldest version (never the latest) and the answer kept for its clients;
    /// returns whether one went. The pool keeps the evicted rows until ``compact()``.
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

    /// Drops the answers kept for reuse.
    func dropAnswers() {
        mutate { $0.dropAnswers() }
    }

    /// Evicts versions past `limit` per feed.
    func trim(toVersions limit: Int) {
        var evicted = false
        while versionCount > max(1, limit) && evictOldest() { evicted = true }
        if evicted && state.withLock({ $0.pool.prints.count > 2 * $0.compactedPoolSize + 1024 }) { compact() }
    }
}
