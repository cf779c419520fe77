import BatchDiff
import BatchDiffJSON
import Foundation
import HTTPServer
import Synchronization

/// One feed: its latest snapshot, the fingerprints of the versions before it, answers
/// already computed for the latest, and the long polls waiting for the next version.
final class Feed: Sendable {
    let id: String
    private let state: Mutex<State>
    private let counters: FeedCounters
    /// Bytes of computed answers kept for reuse; past it they are dropped.
    private static let answerCacheLimit = 32 << 20

    private struct State {
        let idKey: String
        var latest: Snapshot
        var versions: [StoredVersion]
        var pool = RowPrintPool()
        /// The pool's size after its last compaction; it is compacted when it doubles.
        var compactedPoolSize = 0
        /// Answers of `changes?since=N` for the current latest, by N.
        var answers: [Int: [UInt8]] = [:]
        var answerBytes = 0
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
        var deleted = false
        /// Set at shutdown: long polls are answered at once from then on.
        var closing = false

        mutating func dropAnswers() {
            answers = [:]
            answerBytes = 0
        }
    }

    private struct Waiter {
        let since: Int
        let pending: PendingResponse
    }

    /// The outcome of a write.
    struct Write {
        let version: Int
        let changed: Bool
        let body: [UInt8]
    }

    init(id: String, idKey: String, first snapshot: Snapshot, sequence: Int, counters: FeedCounters) {
        self.id = id
        self.counters = counters
        var state = State(idKey: idKey, latest: snapshot, versions: [])
        state.versions = [StoredVersion(number: snapshot.version, sequence: sequence, collection: snapshot.collection, pool: &state.pool)]
        self.state = Mutex(state)
    }

    var idKey: String { state.withLock { $0.idKey } }
    var latestVersion: Int { state.withLock { $0.latest.version } }
    var latestText: (version: Int, bytes: [UInt8]) { state.withLock { ($0.latest.version, $0.latest.bytes) } }

    /// Stores `collection` (read from `bytes`) as a new version unless it equals the latest.
    /// Runs `precondition` on the latest version first, under the feed's lock.
    func write(
        bytes: [UInt8], collection: JSONCollection, fingerprint: Fingerprint, sequence: Int,
        precondition: (Int) throws(Problem) -> Void
    ) throws(Problem) -> Write {
        let (write, woken) = try state.withLock { state throws(Problem) -> (Write, [Waiter]) in
            guard !state.deleted else { throw Problem.feedNotFound(id) }
            try precondition(state.latest.version)
            guard state.latest.fingerprint != fingerprint else {
                var output = JSONOutput()
                output.writeHeader(feed: id, version: state.latest.version, changed: false)
                output.batchMembers(JSONBatch.unchanged(state.latest.collection))
                output.raw("}")
                return (Write(version: state.latest.version, changed: false, body: output.bytes), [])
            }
            guard state.latest.collection.shapeName == collection.shapeName else {
                throw Problem.wrongShape("feed \(id) holds \(state.latest.collection.shapeName); this snapshot is \(collection.shapeName)")
            }
            return Self.commit(&state, bytes: bytes, collection: collection, fingerprint: fingerprint, sequence: sequence, feed: id)
        }
        for waiter in woken { answer(waiter) }
        return write
    }

    private static func commit(
        _ state: inout State, bytes: [UInt8], collection: JSONCollection, fingerprint: Fingerprint, sequence: Int, feed: String
    ) -> (Write, [Waiter]) {
        let batch = try! JSONBatch(from: state.latest.collection, to: collection, options: DiffOptions())
        let snapshot = Snapshot(version: state.latest.version + 1, bytes: bytes, collection: collection, fingerprint: fingerprint)
        state.latest = snapshot
        state.versions.append(StoredVersion(number: snapshot.version, sequence: sequence, collection: collection, pool: &state.pool))
        state.dropAnswers()
        var output = JSONOutput()
        output.writeHeader(feed: feed, version: snapshot.version, changed: true)
        output.batchMembers(batch)
        output.raw("}")
        let woken = Array(state.waiters.values)
        state.waiters = [:]
        return (Write(version: snapshot.version, changed: true, body: output.bytes), woken)
    }

    /// The answer to `changes?since=since`: the batch from that version to the latest, with
    /// the values, computed once per (since, latest) and shared by every client asking.
    func changes(since: Int) throws(Problem) -> [UInt8] {
        try state.withLock { state throws(Problem) -> [UInt8] in
            guard !state.deleted else { throw Problem.feedNotFound(id) }
            if let answer = state.answers[since] {
                counters.recordReused()
                return answer
            }
            let latest = state.latest
            guard since <= latest.version else {
                throw Problem.badQuery("since=\(since) is newer than the latest version of feed \(id), \(latest.version)")
            }
            let batch: JSONBatch
            if since == latest.version {
                batch = .unchanged(latest.collection)
            } else if since == 0 {
                batch = try! JSONBatch(from: latest.empty, to: latest.collection, options: DiffOptions())
            } else if let stored = state.versions.first(where: { $0.number == since }) {
                batch = try! JSONBatch(from: stored.collection(state.pool), to: latest.collection, options: DiffOptions())
            } else {
                throw Problem.versionGone(feed: id, since: since, latest: latest.version)
            }
            var output = JSONOutput(capacity: 1024)
            output.raw("{\"feed\":")
            output.string(id)
            output.raw(",\"from\":")
            output.integer(since)
            output.raw(",\"to\":")
            output.integer(latest.version)
            output.raw(",")
            output.batchMembers(batch)
            output.raw(",")
            output.values(of: batch, from: latest)
            output.raw("}")
            counters.recordComputed()
            if state.answerBytes + output.bytes.count > Self.answerCacheLimit { state.dropAnswers() }
            state.answers[since] = output.bytes
            state.answerBytes += output.bytes.count
            return output.bytes
        }
    }

    /// Parks a long poll for a version newer than `since`, answered by the next write or
    /// after `wait` with the (empty) batch. Answered at once if a newer version is here.
    func park(_ pending: PendingResponse, since: Int, wait: Duration) {
        let waiterID = state.withLock { state -> Int? in
            guard !state.deleted, !state.closing, state.latest.version == since else { return nil }
            state.nextWaiter += 1
            state.waiters[state.nextWaiter] = Waiter(since: since, pending: pending)
            return state.nextWaiter
        }
        guard let waiterID else { return answer(Waiter(since: since, pending: pending)) }
        let seconds = Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
            if let waiter = state.withLock({ $0.waiters.removeValue(forKey: waiterID) }) { answer(waiter) }
        }
    }

    /// Answers every parked long poll now, with what there is; with `closing`, every later
    /// one too.
    func releaseWaiters(closing: Bool = false) {
        let waiters = state.withLock { state in
            defer { state.waiters = [:] }
            state.closing = state.closing || closing
            return Array(state.waiters.values)
        }
        for waiter in waiters { answer(waiter) }
    }

    var waiterCount: Int { state.withLock { $0.waiters.count } }

    private func answer(_ waiter: Waiter) {
        do {
            waiter.pending.send(HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: try changes(since: waiter.since)))
        } catch {
            waiter.pending.send(error.response)
        }
    }

    /// Marks the feed deleted; parked long polls learn it with 404.
    func delete() {
        state.withLock { $0.deleted = true }
        releaseWaiters()
    }

    /// Bytes held, estimated.
    var byteEstimate: Int {
        state.withLock { state in
            state.latest.byteEstimate + state.pool.byteEstimate + state.versions.reduce(0) { $0 + $1.byteEstimate }
                + state.answerBytes
        }
    }

    var versionCount: Int { state.withLock { $0.versions.count } }

    /// The store-wide sequence of the oldest version that may be evicted (not the latest).
    var oldestEvictable: Int? { state.withLock { $0.versions.count > 1 ? $0.versions[0].sequence : nil } }

    /// Evicts the oldest version (never the latest); returns whether one went.
    @discardableResult
    func evictOldest() -> Bool {
        state.withLock { state in
            guard state.versions.count > 1 else { return false }
            state.versions.removeFirst()
            state.dropAnswers()
            if state.pool.prints.count > 2 * state.compactedPoolSize + 1024 {
                state.pool.compact(&state.versions)
                state.compactedPoolSize = state.pool.prints.count
            }
            return true
        }
    }

    /// Evicts versions past `limit` per feed.
    func trim(toVersions limit: Int) {
        while versionCount > max(1, limit) && evictOldest() {}
    }
}

extension JSONOutput {
    /// Appends `{"feed":…,"version":…,"changed":…,` (the batch members follow).
    mutating func writeHeader(feed: String, version: Int, changed: Bool) {
        raw("{\"feed\":")
        string(feed)
        raw(",\"version\":")
        integer(version)
        raw(",\"changed\":")
        bool(changed)
        raw(",")
    }
}
