import Synchronization

/// The observers a store tells of every change (``FeedStore/observe(_:)``).
public final class FeedObservers: Sendable {
    private let observers = Mutex<[@Sendable (FeedChange) -> Void]>([])

    public init() {}

    /// Tells `observer` of every change from now on.
    public func add(_ observer: @escaping @Sendable (FeedChange) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    /// Tells every observer of `change`.
    public func notify(_ change: FeedChange) {
        for observer in observers.withLock({ $0 }) { observer(change) }
    }
}
