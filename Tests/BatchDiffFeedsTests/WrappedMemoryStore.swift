import BatchDiffFeeds
import BatchDiffJSON
import Synchronization

/// The memory store as tests need to see it: its kept batches as `damage` leaves them (a
/// damaged file, a writer of another build), and, when `tellsChanges`, every write told to
/// its observers, as a store other processes share tells them (several cores on one store
/// stand for several servers).
final class WrappedMemoryStore: FeedStore {
    let store: MemoryFeedStore
    private let damage: @Sendable ([[UInt8]]) -> [[UInt8]]?
    private let tellsChanges: Bool
    private let observers = Mutex<[@Sendable (FeedChange) -> Void]>([])

    init(_ store: MemoryFeedStore, tellsChanges: Bool = false, damage: @escaping @Sendable ([[UInt8]]) -> [[UInt8]]? = { $0 }) {
        self.store = store
        self.tellsChanges = tellsChanges
        self.damage = damage
    }

    private func tell(_ change: FeedChange) {
        guard tellsChanges else { return }
        for observer in observers.withLock({ $0 }) { observer(change) }
    }

    func latest(of id: FeedID) async throws(FeedError) -> StoredSnapshot? { try store.latest(of: id) }
    func snapshot(at version: Int, of id: FeedID) async throws(FeedError) -> Snapshot? { try await store.snapshot(at: version, of: id) }
    func batches(of id: FeedID, after since: Int, through latest: Int) async throws(FeedError) -> [[UInt8]]? {
        try await store.batches(of: id, after: since, through: latest).flatMap(damage)
    }
    func append(_ version: NewVersion, to id: FeedID, settings: FeedSettings, after previous: Int?) async throws(FeedError) -> Bool {
        let appended = try await store.append(version, to: id, settings: settings, after: previous)
        if appended { tell(.appended(id, version: version.snapshot.version)) }
        return appended
    }
    func keptAnswer(for key: String, of id: FeedID) async throws(FeedError) -> KeptAnswer? { try store.keptAnswer(for: key, of: id) }
    func keep(_ answer: KeptAnswer, for id: FeedID) async throws(FeedError) { try store.keep(answer, for: id) }
    func delete(_ id: FeedID) async throws(FeedError) -> Bool {
        let deleted = try store.delete(id)
        if deleted { tell(.deleted(id)) }
        return deleted
    }
    func list(after: FeedID?, prefix: String, limit: Int) async throws(FeedError) -> FeedPage { try store.list(after: after, prefix: prefix, limit: limit) }
    func observe(_ observer: @escaping @Sendable (FeedChange) -> Void) { observers.withLock { $0.append(observer) } }
    var statistics: FeedStoreStatistics { store.statistics }
    var bytesInMemory: Int { store.bytesInMemory }
}
