import Synchronization

/// The row orders (``RowOrder``) of list feeds' latest versions, kept between patches so
/// that a patch does not read the whole list again. An order is taken out for a patch and
/// kept again with the version the patch made; within a byte budget, the order kept
/// longest ago is dropped first.
final class RowOrderCache: Sendable {
    private struct Entry {
        let version: Int
        let order: RowOrder
        let bytes: Int
        let kept: Int
    }

    private struct State {
        var entries: [FeedID: Entry] = [:]
        var bytes = 0
        var keeps = 0

        mutating func remove(_ id: FeedID) -> Entry? {
            guard let removed = entries.removeValue(forKey: id) else { return nil }
            bytes -= removed.bytes
            return removed
        }
    }

    private let state = Mutex(State())
    private let budget: Int

    /// A cache of orders of at most `budget` bytes in all.
    init(budget: Int) {
        self.budget = budget
    }

    /// The order of version `version` of feed `id`, taken out; `nil` when none is kept for
    /// that version (one kept for another is dropped).
    func take(_ id: FeedID, version: Int) -> RowOrder? {
        state.withLock { state in
            guard let entry = state.remove(id), entry.version == version else { return nil }
            return entry.order
        }
    }

    /// Keeps `order`, of version `version` of feed `id`.
    func keep(_ order: RowOrder, for id: FeedID, version: Int) {
        let bytes = order.byteEstimate
        guard bytes <= budget else { return }
        state.withLock { state in
            _ = state.remove(id)
            while state.bytes + bytes > budget, let oldest = state.entries.min(by: { $0.value.kept < $1.value.kept })?.key {
                _ = state.remove(oldest)
            }
            state.keeps += 1
            state.entries[id] = Entry(version: version, order: order, bytes: bytes, kept: state.keeps)
            state.bytes += bytes
        }
    }

    /// Drops the order of feed `id`, if kept.
    func drop(_ id: FeedID) {
        state.withLock { _ = $0.remove(id) }
    }

    /// Bytes held, estimated.
    var bytes: Int { state.withLock { $0.bytes } }
}
