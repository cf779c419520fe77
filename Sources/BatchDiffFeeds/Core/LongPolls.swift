import Dispatch
import Synchronization

/// Long polls parked on feeds, each woken once: by a change of its feed, by its deadline,
/// or at shutdown. A long poll registers before it reads the feed's latest version, so a
/// change that comes between the read and the wait still wakes it. A feed's wake-ups can be
/// held while a write of this process stores its version and keeps the answer its long polls
/// will ask for (``holdWakes(of:)``), so they find it rather than compute it again.
final class LongPolls: Sendable {
    /// One parked long poll's wake-up.
    final class Wake: Sendable {
        private struct State {
            var woken = false
            var continuation: CheckedContinuation<Void, Never>?
            /// The wake-up at the deadline, cancelled when the long poll is woken first: a
            /// timer left until its deadline would hold memory for the longest wait.
            var deadline: Deadline?
        }

        /// A dispatch timer, which dispatch makes safe to cancel from any thread.
        private struct Deadline: @unchecked Sendable {
            let timer: any DispatchSourceTimer
        }

        private let state = Mutex(State())

        /// Wakes the long poll (later calls do nothing).
        func wake() {
            let (continuation, deadline) = state.withLock { state -> (CheckedContinuation<Void, Never>?, Deadline?) in
                guard !state.woken else { return (nil, nil) }
                state.woken = true
                defer { (state.continuation, state.deadline) = (nil, nil) }
                return (state.continuation, state.deadline)
            }
            deadline?.timer.cancel()
            continuation?.resume()
        }

        /// Returns when woken, after `limit`, or when the task is cancelled (its client went
        /// away), holding no thread meanwhile.
        func wait(upTo limit: Duration) async {
            await withTaskCancellationHandler {
                await park(upTo: limit)
            } onCancel: {
                wake()
            }
        }

        private func park(upTo limit: Duration) async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
                let deadline = Deadline(timer: DispatchSource.makeTimerSource(queue: .global()))
                deadline.timer.schedule(deadline: .now() + seconds)
                deadline.timer.setEventHandler { [weak self] in self?.wake() }
                let woken = state.withLock { state in
                    if !state.woken { (state.continuation, state.deadline) = (continuation, deadline) }
                    return state.woken
                }
                // A dispatch source must be resumed before its last release, even a cancelled one.
                if woken { deadline.timer.cancel() }
                deadline.timer.resume()
                if woken { continuation.resume() }
            }
        }
    }

    private struct State {
        var parked: [FeedID: [ObjectIdentifier: Wake]] = [:]
        var count = 0
        var closing = false
        /// Feeds whose wake-ups are held, with the number of holds.
        var held: [FeedID: Int] = [:]
        /// Held feeds that changed meanwhile: woken when the last hold is released.
        var changedWhileHeld: Set<FeedID> = []
    }

    private let state = Mutex(State())

    /// A wake-up for a long poll on `feed`, or `nil` at shutdown (answer at once).
    func register(on feed: FeedID) -> Wake? {
        state.withLock { state in
            guard !state.closing else { return nil }
            let wake = Wake()
            state.parked[feed, default: [:]][ObjectIdentifier(wake)] = wake
            state.count += 1
            return wake
        }
    }

    func unregister(_ wake: Wake, from feed: FeedID) {
        state.withLock { state in
            guard state.parked[feed]?.removeValue(forKey: ObjectIdentifier(wake)) != nil else { return }
            state.count -= 1
            if state.parked[feed]?.isEmpty == true { state.parked[feed] = nil }
        }
    }

    /// Wakes every long poll on `feed`, or when its wake-ups are held, once they are released.
    func wake(_ feed: FeedID) {
        let parked = state.withLock { state -> [Wake] in
            guard state.held[feed] == nil else {
                state.changedWhileHeld.insert(feed)
                return []
            }
            return state.parked[feed].map { Array($0.values) } ?? []
        }
        for wake in parked { wake.wake() }
    }

    /// Holds the wake-ups of `feed` until ``releaseWakes(of:)``.
    func holdWakes(of feed: FeedID) {
        state.withLock { $0.held[feed, default: 0] += 1 }
    }

    /// Releases a hold of ``holdWakes(of:)``; the last one wakes the long polls on `feed`
    /// if it changed meanwhile.
    func releaseWakes(of feed: FeedID) {
        let changed = state.withLock { state -> Bool in
            state.held[feed, default: 1] -= 1
            guard state.held[feed] == 0 else { return false }
            state.held[feed] = nil
            return state.changedWhileHeld.remove(feed) != nil
        }
        if changed { wake(feed) }
    }

    /// Wakes every long poll parked now (they read their feeds again).
    func wakeAll() {
        for wake in state.withLock({ $0.parked.values.flatMap(\.values) }) { wake.wake() }
    }

    /// Wakes every long poll now; later ones are answered at once (shutdown).
    func close() {
        state.withLock { $0.closing = true }
        wakeAll()
    }

    /// Whether a long poll (or event stream) waits on `feed` now.
    func areParked(on feed: FeedID) -> Bool {
        state.withLock { $0.parked[feed] != nil }
    }

    /// Long polls parked now.
    var count: Int { state.withLock { $0.count } }
}
