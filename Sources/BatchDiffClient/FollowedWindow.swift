import Foundation

/// The window of a feed a follower holds, which the app moves or grows as the user scrolls
/// (``FollowerConfiguration/window``): the rows `offset ..< offset+limit` of a list, or the
/// sections of a sectioned collection, each whole (docs/feeds.md §5.3).
///
/// After ``move(to:)`` the follower cuts short the long poll it has parked, brings the rows
/// it holds to the latest version (an update like any other), then fetches the rows the new
/// window lacks, a page or two, and gives the update that takes the rows shown to the new
/// window: rows that leave it deleted, rows that come into it inserted. A page of another
/// version than the one it holds (a write came between) is not taken: it brings its rows to
/// that version and pages again.
public final class FollowedWindow: @unchecked Sendable {  // its state is read and written under `lock`
    private let lock = NSLock()
    private var current: RowWindow
    private var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    private var nextWaiter = 0

    /// A window that starts as `window`.
    public init(_ window: RowWindow) {
        current = window
    }

    /// The window asked for now.
    public var window: RowWindow {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    /// Moves (or grows, or shrinks) the window; to where it is, nothing.
    public func move(to window: RowWindow) {
        lock.lock()
        guard window != current else {
            lock.unlock()
            return
        }
        current = window
        let woken = waiters.values
        waiters = [:]
        lock.unlock()
        for waiter in woken { waiter.resume() }
    }

    /// Returns once the window is other than `held`, or the task is cancelled.
    func waitForMove(from held: RowWindow) async {
        let id: Int = {
            lock.lock()
            defer { lock.unlock() }
            nextWaiter += 1
            return nextWaiter
        }()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                lock.lock()
                if current != held || Task.isCancelled {
                    lock.unlock()
                    continuation.resume()
                } else {
                    waiters[id] = continuation
                    lock.unlock()
                }
            }
        } onCancel: {
            lock.lock()
            let waiter = waiters.removeValue(forKey: id)
            lock.unlock()
            waiter?.resume()
        }
    }
}
