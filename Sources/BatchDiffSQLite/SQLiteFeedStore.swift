import BatchDiffFeeds
import BatchDiffJSON
import Dispatch
import SQLite
import Synchronization

/// Feeds in one SQLite file, for one server: they survive restarts and `kill -9` (an
/// acknowledged write is committed with `synchronous=FULL` in WAL mode before it is
/// answered). The latest snapshots read are kept in memory, within `maxBytes`; the file
/// keeps `maxVersions` versions per feed. A second server on the same file fails at start.
///
/// Every call runs on the store's own serial queue, never on the caller's thread: the
/// connection is used there only, which is what makes the type `Sendable`.
public final class SQLiteFeedStore: FeedStore, @unchecked Sendable {
    private let connection: SQLiteConnection
    private let queue = DispatchQueue(label: "batchdiff.sqlite-store")
    private let maxVersions: Int
    private let cache: Mutex<LatestSnapshotCache>
    private let counts: Mutex<FeedStoreStatistics>
    private let observers = FeedObservers()
    private let metrics = StoreMetrics(store: "sqlite")

    /// Opens (creating) the store at `path`; throws a message naming the file when it cannot
    /// be opened or another server uses it.
    public init(path: String, maxVersions: Int, maxBytes: Int) throws(FeedError) {
        self.maxVersions = maxVersions
        // Half of the memory feeds may hold; the answers kept have the rest.
        cache = Mutex(LatestSnapshotCache(bound: maxBytes / 2))
        do throws(SQLiteError) {
            let connection = try SQLiteConnection(path: path)
            self.connection = connection
            // One writer, for good: the file's lock is held while this server runs.
            try connection.execute("PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL")
            try connection.writeTransaction { () throws(SQLiteError) in
                try connection.execute("""
                    CREATE TABLE IF NOT EXISTS feeds (
                        id TEXT PRIMARY KEY, id_key TEXT NOT NULL, latest INTEGER NOT NULL, unique_identities INTEGER NOT NULL DEFAULT 0
                    ) WITHOUT ROWID;
                    CREATE TABLE IF NOT EXISTS versions (
                        feed TEXT NOT NULL, version INTEGER NOT NULL, body BLOB NOT NULL, PRIMARY KEY (feed, version)
                    ) WITHOUT ROWID;
                    CREATE TABLE IF NOT EXISTS kept_answers (
                        feed TEXT NOT NULL, key TEXT NOT NULL, version INTEGER NOT NULL, request INTEGER NOT NULL,
                        changed INTEGER NOT NULL, body BLOB NOT NULL, PRIMARY KEY (feed, key)
                    ) WITHOUT ROWID;
                    """)
                // A file made before feeds kept `uniqueIdentities` gains the column (false).
                let column = try connection.prepare("SELECT count(*) FROM pragma_table_info('feeds') WHERE name = 'unique_identities'")
                _ = try column.step()
                if column.integer(at: 0) == 0 {
                    try connection.execute("ALTER TABLE feeds ADD COLUMN unique_identities INTEGER NOT NULL DEFAULT 0")
                }
            }
            let feeds = try connection.prepare("SELECT count(*) FROM feeds")
            let versions = try connection.prepare("SELECT count(*) FROM versions")
            _ = try feeds.step()
            _ = try versions.step()
            counts = Mutex(FeedStoreStatistics(feeds: feeds.integer(at: 0), versions: versions.integer(at: 0), bytesInMemory: 0))
        } catch {
            throw .internalFailure(error.isBusy
                ? "the SQLite file \(path) is in use by another server"
                : "cannot open the SQLite file \(path): \(error.message)")
        }
    }

    /// Runs `work` with the connection on the store's queue.
    private func run<Value: Sendable>(_ work: @escaping @Sendable (SQLiteConnection) throws(FeedError) -> Value) async throws(FeedError) -> Value {
        let start = ContinuousClock.now
        let result: Result<Value, FeedError> = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: Result { () throws(FeedError) in try work(self.connection) }) }
        }
        metrics.record(since: start, failed: (try? result.get()) == nil)
        return try result.get()
    }

    public func latest(of id: FeedID) async throws(FeedError) -> StoredSnapshot? {
        if let cached = cache.withLock({ $0[id] }) { return cached }
        let row = try await run { connection throws(FeedError) -> (settings: FeedSettings, version: Int, body: [UInt8])? in
            try Self.sql { () throws(SQLiteError) -> (settings: FeedSettings, version: Int, body: [UInt8])? in
                let select = try connection.prepare("""
                    SELECT f.id_key, f.unique_identities, v.version, v.body
                    FROM feeds f JOIN versions v ON v.feed = f.id AND v.version = f.latest WHERE f.id = ?
                    """)
                try select.bind(.text(id.name))
                guard try select.step() else { return nil }
                let settings = FeedSettings(idKey: select.text(at: 0), uniqueIdentities: select.integer(at: 1) != 0)
                return (settings, select.integer(at: 2), select.blob(at: 3))
            }
        }
        guard let row else { return nil }
        // Read again on a worker, not on the store's queue, which every feed shares.
        let found = StoredSnapshot(settings: row.settings, snapshot: try await Workers.run { () throws(FeedError) in
            try Snapshot(text: row.body, idKey: row.settings.idKey).numbered(row.version)
        })
        // Kept in the order of the store's calls: a write or a deletion since the read wins.
        try await run { _ throws(FeedError) in self.keep(found, for: id, ifStillVersion: row.version) }
        return found
    }

    public func snapshot(at version: Int, of id: FeedID) async throws(FeedError) -> Snapshot? {
        let row = try await run { connection throws(FeedError) -> (idKey: String, body: [UInt8])? in
            try Self.sql { () throws(SQLiteError) -> (idKey: String, body: [UInt8])? in
                let select = try connection.prepare("""
                    SELECT f.id_key, v.body FROM feeds f JOIN versions v ON v.feed = f.id WHERE f.id = ? AND v.version = ?
                    """)
                try select.bind(.text(id.name), .integer(version))
                guard try select.step() else { return nil }
                return (select.text(at: 0), select.blob(at: 1))
            }
        }
        guard let row else { return nil }
        return try await Workers.run { () throws(FeedError) in try Snapshot(text: row.body, idKey: row.idKey).numbered(version) }
    }

    public func append(
        _ snapshot: Snapshot, to id: FeedID, settings: FeedSettings, after previous: Int?, keeping answer: KeptAnswer?
    ) async throws(FeedError) -> Bool {
        let (maxVersions, text) = (maxVersions, snapshot.bytes)
        let trimmed = try await run { connection throws(FeedError) -> Int? in
            try Self.sql { () throws(SQLiteError) -> Int? in
                try connection.writeTransaction { () throws(SQLiteError) -> Int? in
                    let latest = try connection.prepare("SELECT latest FROM feeds WHERE id = ?")
                    try latest.bind(.text(id.name))
                    let current: Int? = try latest.step() ? latest.integer(at: 0) : nil
                    guard current == previous else { return nil }
                    let feed = try connection.prepare("""
                        INSERT INTO feeds (id, id_key, latest, unique_identities) VALUES (?, ?, ?, ?)
                        ON CONFLICT (id) DO UPDATE SET latest = excluded.latest
                        """)
                    try feed.bind(.text(id.name), .text(settings.idKey), .integer(snapshot.version), .integer(settings.uniqueIdentities ? 1 : 0))
                    try feed.run()
                    let version = try connection.prepare("INSERT INTO versions (feed, version, body) VALUES (?, ?, ?)")
                    try version.bind(.text(id.name), .integer(snapshot.version), .blob(text))
                    try version.run()
                    if let answer { try Self.insert(answer, for: id, into: connection) }
                    let trimmedAnswers = try connection.prepare("DELETE FROM kept_answers WHERE feed = ? AND version <= ?")
                    try trimmedAnswers.bind(.text(id.name), .integer(snapshot.version - maxVersions))
                    try trimmedAnswers.run()
                    let trim = try connection.prepare("DELETE FROM versions WHERE feed = ? AND version <= ?")
                    try trim.bind(.text(id.name), .integer(snapshot.version - maxVersions))
                    try trim.run()
                    return connection.changes
                }
            }.map { trimmed in
                self.keep(StoredSnapshot(settings: settings, snapshot: snapshot), for: id, ifStillVersion: nil)
                return trimmed
            }
        }
        guard let trimmed else { return false }
        counts.withLock { counts in
            if previous == nil { counts.feeds += 1 }
            counts.versions += 1 - trimmed
        }
        observers.notify(.appended(id, version: snapshot.version))
        return true
    }

    public func keptAnswer(for key: String, of id: FeedID) async throws(FeedError) -> KeptAnswer? {
        try await run { connection throws(FeedError) -> KeptAnswer? in
            try Self.sql { () throws(SQLiteError) -> KeptAnswer? in
                let select = try connection.prepare("SELECT version, request, changed, body FROM kept_answers WHERE feed = ? AND key = ?")
                try select.bind(.text(id.name), .text(key))
                guard try select.step() else { return nil }
                return KeptAnswer(
                    key: key, request: UInt64(bitPattern: Int64(select.integer(at: 1))), version: select.integer(at: 0),
                    changed: select.integer(at: 2) != 0, body: select.blob(at: 3)
                )
            }
        }
    }

    public func keep(_ answer: KeptAnswer, for id: FeedID) async throws(FeedError) {
        try await run { connection throws(FeedError) in
            try Self.sql { () throws(SQLiteError) in
                try connection.writeTransaction { () throws(SQLiteError) in
                    // Only with a version still retained (the feed may have moved on and trimmed it).
                    let retained = try connection.prepare("SELECT 1 FROM versions WHERE feed = ? AND version = ?")
                    try retained.bind(.text(id.name), .integer(answer.version))
                    if try retained.step() { try Self.insert(answer, for: id, into: connection) }
                }
            }
        }
    }

    /// Inserts `answer` (a key is kept once: the first answer stays).
    private static func insert(_ answer: KeptAnswer, for id: FeedID, into connection: SQLiteConnection) throws(SQLiteError) {
        let insert = try connection.prepare("""
            INSERT INTO kept_answers (feed, key, version, request, changed, body) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
            """)
        try insert.bind(
            .text(id.name), .text(answer.key), .integer(answer.version), .integer(Int(Int64(bitPattern: answer.request))),
            .integer(answer.changed ? 1 : 0), .blob(answer.body)
        )
        try insert.run()
    }

    public func delete(_ id: FeedID) async throws(FeedError) -> Bool {
        let removed = try await run { connection throws(FeedError) -> Int? in
            let removed = try Self.sql { () throws(SQLiteError) -> Int? in
                try connection.writeTransaction { () throws(SQLiteError) -> Int? in
                    let answers = try connection.prepare("DELETE FROM kept_answers WHERE feed = ?")
                    try answers.bind(.text(id.name))
                    try answers.run()
                    let versions = try connection.prepare("DELETE FROM versions WHERE feed = ?")
                    try versions.bind(.text(id.name))
                    try versions.run()
                    let count = connection.changes
                    let feed = try connection.prepare("DELETE FROM feeds WHERE id = ?")
                    try feed.bind(.text(id.name))
                    try feed.run()
                    return connection.changes == 1 ? count : nil
                }
            }
            self.cache.withLock { $0.remove(id) }
            return removed
        }
        guard let removed else { return false }
        counts.withLock { counts in
            counts.feeds -= 1
            counts.versions -= removed
        }
        observers.notify(.deleted(id))
        return true
    }

    public func list(after: FeedID?, limit: Int) async throws(FeedError) -> FeedPage {
        try await run { connection throws(FeedError) -> FeedPage in
            try Self.sql { () throws(SQLiteError) -> FeedPage in
                let select = try connection.prepare("SELECT id, latest FROM feeds WHERE id > ? ORDER BY id LIMIT ?")
                try select.bind(.text(after?.name ?? ""), .integer(limit + 1))
                var feeds: [FeedSummary] = []
                while try select.step() {
                    guard let id = try? FeedID(select.text(at: 0)) else { continue }
                    feeds.append(FeedSummary(id: id, version: select.integer(at: 1)))
                }
                let more = feeds.count > limit
                return FeedPage(feeds: Array(feeds.prefix(limit)), more: more)
            }
        }
    }

    public func observe(_ observer: @escaping @Sendable (FeedChange) -> Void) {
        observers.add(observer)
    }

    public var statistics: FeedStoreStatistics {
        var statistics = counts.withLock { $0 }
        statistics.bytesInMemory = bytesInMemory
        return statistics
    }

    /// The latest snapshots kept in memory.
    public var bytesInMemory: Int { cache.withLock { $0.bytes } }

    /// Keeps the latest snapshot of `id`, dropping others while the cache is over its bound;
    /// with `ifStillVersion`, only when the file's latest is still that version (a read kept
    /// after a write or a deletion would be stale). Runs on the store's queue.
    private func keep(_ stored: StoredSnapshot, for id: FeedID, ifStillVersion version: Int?) {
        if let version {
            guard let latest = try? connection.prepare("SELECT latest FROM feeds WHERE id = ?"),
                  (try? latest.bind(.text(id.name))) != nil, (try? latest.step()) == true, latest.integer(at: 0) == version
            else { return }
        }
        cache.withLock { $0.keep(stored, for: id) }
    }

    /// `body`, its SQLite errors as feed errors.
    private static func sql<Value>(_ body: () throws(SQLiteError) -> Value) throws(FeedError) -> Value {
        do throws(SQLiteError) {
            return try body()
        } catch {
            throw .internalFailure("SQLite: \(error)")
        }
    }
}
