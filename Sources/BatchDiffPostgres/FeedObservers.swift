import BatchDiffFeeds
import Synchronization

/// The observers the store tells of every change a server made, itself included, as the
/// listener hears them (``FeedStore/observe(_:)``).
final class FeedObservers: Sendable {
    private let observers = Mutex<[@Sendable (FeedChange) -> Void]>([])

    init() {}

    /// Tells `observer` of every change from now on.
    func add(_ observer: @escaping @Sendable (FeedChange) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    /// Tells every observer of `change`.
    func notify(_ change: FeedChange) {
        for observer in observers.withLock({ $0 }) { observer(change) }
    }
}
