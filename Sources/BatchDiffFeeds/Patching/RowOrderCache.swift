import Synchronization

/// Feeds' latest collections as patches keep them (``PatchRows``), kept between patches so
/// that a patch does not read the whole collection again, and read in place for pages. One
/// is taken out for a patch and kept again with the version the patch made; within a byte
/// budget, the one kept longest ago is dropped first.
final class RowOrderCache: Sendable {
    private struct Entry {
        let version: Int
        let rows: PatchRows
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

    /// The collection of version `version` of feed `id`, taken out; `nil` when none is kept
    /// for that version (one kept for another is dropped).
    func take(_ id: FeedID, version: Int) -> PatchRows? {
        state.withLock { state in
            guard let entry = state.remove(id), entry.version == version else { return nil }
            return entry.rows
        }
    }

    /// What `read` reads of the collection kept for version `version` of feed `id`, read in
    /// place, under the cache's lock (a copy held past it would make the next patch copy the
    /// whole collection before it changes it); `nil` when none is kept for that version.
    func read<Value: Sendable>(_ id: FeedID, version: Int, _ read: (borrowing PatchRows) throws(FeedError) -> Value) throws(FeedError) -> Value? {
        try state.withLock { state throws(FeedError) -> Value? in
            guard let entry = state.entries[id], entry.version == version else { return nil }
            return try read(entry.rows)
        }
    }

    /// Keeps `rows`, of version `version` of feed `id`, unless one of that version or a
    /// later one is kept.
    func keep(_ rows: PatchRows, for id: FeedID, version: Int) {
        let bytes = rows.byteEstimate
        guard bytes <= budget else { return }
        state.withLock { state in
            if let kept = state.entries[id], kept.version >= version { return }
            _ = state.remove(id)
            while state.bytes + bytes > budget, let oldest = state.entries.min(by: { $0.value.kept < $1.value.kept })?.key {
                _ = state.remove(oldest)
            }
            state.keeps += 1
            state.entries[id] = Entry(version: version, rows: rows, bytes: bytes, kept: state.keeps)
            state.bytes += bytes
        }
    }

    /// Drops the collection kept for feed `id`, if any; whether there was one.
    @discardableResult
    func drop(_ id: FeedID) -> Bool {
        state.withLock { $0.remove(id) != nil }
    }

    /// Bytes held, estimated.
    var bytes: Int { state.withLock { $0.bytes } }
}
