import Synchronization

/// Long polls (and event streams) parked on feeds, each woken once: with a feed's new
/// latest version, by its deletion, by a failure of the store, by its deadline, or at
/// shutdown. The wake path goes one way: whoever learns of a new version (the write that
/// stored it, or the one read of the store a change made by another process causes) hands
/// it to the long polls, which read nothing from the store.
///
/// A long poll registers before it reads the feed's latest version, so a version stored
/// between the read and the wait still wakes it. While long polls are parked on a feed, the
/// newest version they were woken with is kept for the next ones to start from, and for a
/// while after the last has left: a client that comes back for the next version reads
/// nothing from the store either. A kept version is forgotten as soon as it may not be the
/// latest: another process's version of the feed, its deletion, changes missed.
final class LongPolls: Sendable {
    /// How a parked long poll ended.
    enum Outcome: Sendable {
        /// The feed's new latest version.
        case latest(StoredSnapshot)
        /// The feed was deleted.
        case deleted
        /// The store failed while reading the feed's new latest version.
        case failed(FeedError)
        /// Nothing came before the deadline (or the client went away, or the server shuts down).
        case expired
    }

    /// One parked long poll's wake-up, for a client at version `since`.
    final class Wake: Sendable {
        let since: Int

        private struct State {
            var outcome: Outcome?
            var continuation: CheckedContinuation<Outcome, Never>?
            /// The wake-up at the deadline, cancelled when the long poll is woken first: a
            /// deadline left until it passes would hold memory for the longest wait.
            var deadline: Deadlines.Token?
        }

        private let state = Mutex(State())
        private let deadlines: Deadlines

        init(since: Int, deadlines: Deadlines) {
            self.since = since
            self.deadlines = deadlines
        }

        /// Wakes the long poll with `outcome` (later calls do nothing).
        func wake(_ outcome: Outcome) {
            let (continuation, deadline) = state.withLock { state -> (CheckedContinuation<Outcome, Never>?, Deadlines.Token?) in
                guard state.outcome == nil else { return (nil, nil) }
                state.outcome = outcome
                defer { (state.continuation, state.deadline) = (nil, nil) }
                return (state.continuation, state.deadline)
            }
            if let deadline { deadlines.cancel(deadline) }
            continuation?.resume(returning: outcome)
        }

        /// How the long poll ended: when woken, after `limit` on the long polls' clock, or
        /// when the task is cancelled (its client went away), holding no thread meanwhile.
        func wait(upTo limit: Duration) async -> Outcome {
            await withTaskCancellationHandler {
                await park(upTo: limit)
            } onCancel: {
                wake(.expired)
            }
        }

        private func park(upTo limit: Duration) async -> Outcome {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let deadline = deadlines.schedule(after: limit) { [weak self] in self?.wake(.expired) }
                let outcome = state.withLock { state in
                    if state.outcome == nil { (state.continuation, state.deadline) = (continuation, deadline) }
                    return state.outcome
                }
                if let outcome {
                    deadlines.cancel(deadline)
                    continuation.resume(returning: outcome)
                }
            }
        }
    }

    /// The long polls parked on one feed, and the newest version they were woken with.
    private struct Parked {
        var wakes: [ObjectIdentifier: Wake] = [:]
        var latest: StoredSnapshot?
    }

    private struct State {
        var parked: [FeedID: Parked] = [:]
        var count = 0
        var closing = false
        /// Feeds whose long polls all left with a version kept, oldest first: their clients
        /// come back for the next version, most of them after the last has left.
        var idle: [FeedID] = []
        var idleBytes = 0

        /// Forgets the versions kept for the idle feeds longest idle, until the rest take at
        /// most `budget` bytes.
        mutating func keepIdle(within budget: Int) {
            while idleBytes > budget, !idle.isEmpty {
                let oldest = idle.removeFirst()
                idleBytes -= parked.removeValue(forKey: oldest)?.latest?.snapshot.byteEstimate ?? 0
            }
        }

        /// Forgets `feed`'s kept version when no long poll is parked on it.
        mutating func dropIfIdle(_ feed: FeedID) {
            guard let parked = parked[feed], parked.wakes.isEmpty else { return }
            self.parked[feed] = nil
            idle.removeAll { $0 == feed }
            idleBytes -= parked.latest?.snapshot.byteEstimate ?? 0
        }
    }

    private let state = Mutex(State())
    private let deadlines: Deadlines
    /// Bytes of versions kept for feeds no long poll is parked on (they are the store's
    /// latest versions, whose memory they share while the store keeps them).
    private let idleBudget: Int

    /// Long polls whose deadlines pass on `clock`, keeping up to `idleBudget` bytes of
    /// versions for feeds whose long polls all left (``unregister(_:from:)``).
    init(clock: FeedClock, idleBudget: Int) {
        deadlines = Deadlines(clock: clock)
        self.idleBudget = idleBudget
    }

    /// A wake-up for a long poll on `feed` from version `since`, and the newest version long
    /// polls on it were woken with, if still known; `nil` at shutdown (answer at once).
    func register(on feed: FeedID, since: Int) -> (wake: Wake, known: StoredSnapshot?)? {
        state.withLock { state in
            guard !state.closing else { return nil }
            if let parked = state.parked[feed], parked.wakes.isEmpty {
                state.idle.removeAll { $0 == feed }
                state.idleBytes -= parked.latest?.snapshot.byteEstimate ?? 0
            }
            let wake = Wake(since: since, deadlines: deadlines)
            state.parked[feed, default: Parked()].wakes[ObjectIdentifier(wake)] = wake
            state.count += 1
            return (wake, state.parked[feed]?.latest)
        }
    }

    /// Removes `wake`; when it was the last on `feed`, the version kept for it stays (within
    /// the budget, the oldest going first) for the clients that come back.
    func unregister(_ wake: Wake, from feed: FeedID) {
        state.withLock { state in
            guard state.parked[feed]?.wakes.removeValue(forKey: ObjectIdentifier(wake)) != nil else { return }
            state.count -= 1
            guard let parked = state.parked[feed], parked.wakes.isEmpty else { return }
            guard let latest = parked.latest, latest.snapshot.byteEstimate <= idleBudget else {
                state.parked[feed] = nil
                return
            }
            state.idle.append(feed)
            state.idleBytes += latest.snapshot.byteEstimate
            state.keepIdle(within: idleBudget)
        }
    }

    /// Wakes the long polls on `feed` at a version before `latest`'s with it, and keeps it
    /// for the next ones (unless a newer one is kept).
    func wake(_ feed: FeedID, with latest: StoredSnapshot) {
        let version = latest.snapshot.version
        let woken = state.withLock { state -> [Wake] in
            guard var parked = state.parked[feed], (parked.latest?.snapshot.version ?? .min) < version else { return [] }
            if parked.wakes.isEmpty {
                // Kept for the long polls to come instead.
                state.idleBytes += latest.snapshot.byteEstimate - (parked.latest?.snapshot.byteEstimate ?? 0)
            }
            parked.latest = latest
            state.parked[feed] = parked
            state.keepIdle(within: idleBudget)
            return parked.wakes.values.filter { $0.since < version }
        }
        for wake in woken { wake.wake(.latest(latest)) }
    }

    /// Wakes every long poll on `feed` with `outcome` (a deletion, a failure), forgetting
    /// the version kept.
    func wakeAll(_ feed: FeedID, with outcome: Outcome) {
        let woken = state.withLock { state -> [Wake] in
            state.dropIfIdle(feed)
            state.parked[feed]?.latest = nil
            return state.parked[feed].map { Array($0.wakes.values) } ?? []
        }
        for wake in woken { wake.wake(outcome) }
    }

    /// Whether version `version` of `feed`, stored by another process, would wake a long
    /// poll: some are parked on it, and the version kept for them is older. A version kept
    /// for a feed no long poll is parked on is forgotten.
    func wouldWake(_ version: Int, of feed: FeedID) -> Bool {
        state.withLock { state in
            guard let parked = state.parked[feed], (parked.latest?.snapshot.version ?? .min) < version else { return false }
            state.dropIfIdle(feed)
            return state.parked[feed] != nil
        }
    }

    /// The feeds long polls are parked on, whose kept versions are forgotten (and those of
    /// feeds none is parked on): changes may have been missed.
    func forgetLatest() -> [FeedID] {
        state.withLock { state in
            for feed in state.idle { state.dropIfIdle(feed) }
            for feed in state.parked.keys { state.parked[feed]?.latest = nil }
            return Array(state.parked.keys)
        }
    }

    /// Ends every long poll now (each answers with what it read); later ones are answered
    /// at once (shutdown).
    func close() {
        let woken = state.withLock { state in
            state.closing = true
            return state.parked.values.flatMap(\.wakes.values)
        }
        for wake in woken { wake.wake(.expired) }
    }

    /// Whether a long poll (or event stream) waits on `feed` now.
    func areParked(on feed: FeedID) -> Bool {
        state.withLock { $0.parked[feed].map { !$0.wakes.isEmpty } ?? false }
    }

    /// Long polls parked now.
    var count: Int { state.withLock { $0.count } }
}
