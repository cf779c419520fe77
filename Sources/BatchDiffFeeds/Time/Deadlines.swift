import HeapModule
import Synchronization

/// Actions to run at deadlines on a ``FeedClock``: one heap of deadlines, one sleeping
/// task for the earliest. A long poll's deadline is set when it parks and cancelled when it
/// is woken first; a cancelled deadline holds a few bytes in the heap until it is passed,
/// or until cancelled deadlines are most of the heap (then the heap is rebuilt without them).
final class Deadlines: Sendable {
    /// A deadline set, to cancel it with.
    struct Token: Hashable, Sendable {
        fileprivate let serial: Int
    }

    private struct Entry: Comparable {
        let time: Duration
        let serial: Int

        static func < (left: Entry, right: Entry) -> Bool {
            (left.time, left.serial) < (right.time, right.serial)
        }
    }

    private struct State {
        var heap = Heap<Entry>()
        var actions: [Int: @Sendable () -> Void] = [:]
        var nextSerial = 0
        /// The deadline the sleeping task wakes at, and the task; its generation tells it
        /// from a task replaced after its sleep ended.
        var armed: (time: Duration, generation: Int, sleeper: Task<Void, Never>)?
        var generation = 0

        /// Starts a task that sleeps until `time` (made by `sleeper` with its generation).
        mutating func arm(at time: Duration, sleeper: (Duration, Int) -> Task<Void, Never>) {
            generation += 1
            armed = (time, generation, sleeper(time, generation))
        }

        /// Drops the heap's cancelled entries when they are most of it.
        mutating func compactIfStale() {
            let stale = heap.count - actions.count
            guard stale > 1024, stale > heap.count / 2 else { return }
            heap = Heap(heap.unordered.filter { actions[$0.serial] != nil })
        }
    }

    private let clock: FeedClock
    private let state = Mutex(State())

    /// Deadlines on `clock`.
    init(clock: FeedClock) {
        self.clock = clock
    }

    /// Runs `action` once `delay` has passed on the clock, unless cancelled first.
    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> Token {
        let time = clock.elapsed() + delay
        let (token, replaced) = state.withLock { state -> (Token, Task<Void, Never>?) in
            let serial = state.nextSerial
            state.nextSerial += 1
            state.heap.insert(Entry(time: time, serial: serial))
            state.actions[serial] = action
            guard state.armed.map({ time < $0.time }) ?? true else { return (Token(serial: serial), nil) }
            let replaced = state.armed?.sleeper
            state.arm(at: time, sleeper: sleeper)
            return (Token(serial: serial), replaced)
        }
        replaced?.cancel()
        return token
    }

    /// Cancels the deadline `token` names (nothing if it has run).
    func cancel(_ token: Token) {
        state.withLock { state in
            guard state.actions.removeValue(forKey: token.serial) != nil else { return }
            state.compactIfStale()
        }
    }

    /// The number of deadlines set and neither run nor cancelled.
    var count: Int {
        state.withLock { $0.actions.count }
    }

    /// A task of `generation` that sleeps until `time`, then runs the actions due.
    private func sleeper(until time: Duration, generation: Int) -> Task<Void, Never> {
        Task { [weak self, clock] in
            do { try await clock.sleep(time) } catch { return }
            self?.runDue(generation: generation)
        }
    }

    /// Runs the actions whose deadlines have passed and sets the sleeping task for the next,
    /// unless the sleeping task of `generation` was replaced.
    private func runDue(generation: Int) {
        let now = clock.elapsed()
        let due = state.withLock { state -> [@Sendable () -> Void] in
            guard state.armed?.generation == generation else { return [] }
            var due: [@Sendable () -> Void] = []
            while let first = state.heap.min, first.time <= now {
                state.heap.removeMin()
                if let action = state.actions.removeValue(forKey: first.serial) { due.append(action) }
            }
            while let first = state.heap.min, state.actions[first.serial] == nil { state.heap.removeMin() }
            state.armed = nil
            if let next = state.heap.min { state.arm(at: next.time, sleeper: sleeper) }
            return due
        }
        for action in due { action() }
    }
}
