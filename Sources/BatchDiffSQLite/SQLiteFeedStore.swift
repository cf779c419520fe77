import BatchDiffFeeds
import BatchDiffJSON
import Dispatch
import SQLite
import Synchronization

/// Feeds in one SQLite file, for one server: they survive restarts and `kill -9` (an
/// acknowledged write is committed with `synchronous=FULL` in WAL mode before it is
/// answered). The latest snapshots read are kept in memory, within `maxBytes`; the file
/// keeps `maxVersions` versions per feed, each as its change from the one before or whole
/// (``DeltaChain``). A second server on the same file fails at start.
///
/// The file's schema is brought forward when it is opened (``SQLiteSchema``); one newer
/// than this server knows is refused. Each statement is compiled once, when first run.
///
/// Every call runs on the store's own serial queue, never on the caller's thread: the
/// connection is used there only, which is what makes the type `Sendable`.
package final class SQLiteFeedStore: FeedStore, @unchecked Sendable {
    private let connection: SQLiteConnection
    private let queue = DispatchQueue(label: "batchdiff.sqlite-store")
    private let maxVersions: Int
    private let cache: Mutex<LatestSnapshotCache>
    private let counts: Mutex<FeedStoreStatistics>
    private let metrics = StoreMetrics(store: "sqlite")

    /// Opens (creating) the store at `path`; throws a message naming the file when it cannot
    /// be opened or another server uses it.
    package init(path: String, maxVersions: Int, maxBytes: Int) throws(FeedError) {
        self.maxVersions = maxVersions
        // Half of the memory feeds may hold; the answers kept have the rest.
        cache = Mutex(LatestSnapshotCache(bound: maxBytes / 2))
        var schema = 0
        do throws(SQLiteError) {
            let connection = try SQLiteConnection(path: path)
            self.connection = connection
            // One writer, for good: the file's lock is held while this server runs.
            try connection.execute("PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL")
            schema = try SQLiteSchema.migrator.migrate(connection)
            let (feeds, versions) = (try connection.integer("SELECT count(*) FROM feeds"), try connection.integer("SELECT count(*) FROM versions"))
            counts = Mutex(FeedStoreStatistics(feeds: feeds, versions: versions, bytesInMemory: 0))
        } catch {
            throw .internalFailure(error.isBusy
                ? "the SQLite file \(path) is in use by another server"
                : "cannot open the SQLite file \(path): \(error.message)")
        }
        guard schema <= SQLiteSchema.migrator.latestVersion else {
            throw .internalFailure(
                "the SQLite file \(path) is of schema version \(schema), newer than this server's \(SQLiteSchema.migrator.latestVersion): upgrade the server"
            )
        }
    }

    /// Runs `work` with the connection on the store's queue.
    private func run<Value: Sendable>(_ work: @escaping @Sendable (SQLiteConnection) throws(FeedError) -> Value) async throws(FeedError) -> Value {
        let start = ContinuousClock.now
        let result: Result<Value, FeedError> = await withCheckedContinuation { continuation in
            queue.async {
                let result = Result { () throws(FeedError) in try work(self.connection) }
                self.connection.resetStatements()
                continuation.resume(returning: result)
            }
        }
        metrics.record(since: start, failed: (try? result.get()) == nil)
        return try result.get()
    }

    package func latest(of id: FeedID) async throws(FeedError) -> StoredSnapshot? {
        if let cached = cache.withLock({ $0[id] }) { return cached }
        let row = try await run { connection throws(FeedError) -> (settings: FeedSettings, version: Int, links: [DeltaChain.Link])? in
            let read = try Self.sql { () throws(SQLiteError) -> (settings: [String?], unique: Bool, version: Int, links: [DeltaChain.Link])? in
                let select = try connection.cachedStatement("""
                    SELECT f.id_key, f.unique_identities, f.latest, f.order_by, f.section_order_by FROM feeds f WHERE f.id = ?
                    """)
                try select.bind(.text(id.name))
                guard try select.step() else { return nil }
                let version = select.integer(at: 2)
                let texts = [select.text(at: 0), select.optionalText(at: 3), select.optionalText(at: 4)]
                return (texts, select.integer(at: 1) != 0, version, try Self.links(to: version, of: id, in: connection))
            }
            guard let read else { return nil }
            let settings = try FeedSettings(stored: read.settings[0]!, uniqueIdentities: read.unique, orderBy: read.settings[1], sectionOrderBy: read.settings[2])
            return (settings, read.version, read.links)
        }
        guard let row else { return nil }
        // Read again on a worker, not on the store's queue, which every feed shares.
        let found = StoredSnapshot(settings: row.settings, snapshot: try await Workers.run { () throws(FeedError) in
            try Snapshot(text: DeltaChain.text(of: row.links), idKey: row.settings.idKey).numbered(row.version)
        })
        // Kept in the order of the store's calls: a write or a deletion since the read wins.
        try await run { _ throws(FeedError) in self.keep(found, for: id, ifStillVersion: row.version) }
        return found
    }

    package func snapshot(at version: Int, of id: FeedID) async throws(FeedError) -> Snapshot? {
        let maxVersions = maxVersions
        let row = try await run { connection throws(FeedError) -> (idKey: String, links: [DeltaChain.Link])? in
            try Self.sql { () throws(SQLiteError) -> (idKey: String, links: [DeltaChain.Link])? in
                // Retained: one of the last `maxVersions` (older ones may stay as the start of
                // a retained one's changes).
                let select = try connection.cachedStatement("""
                    SELECT f.id_key FROM feeds f JOIN versions v ON v.feed = f.id
                    WHERE f.id = ?1 AND v.version = ?2 AND ?2 > f.latest - ?3
                    """)
                try select.bind(.text(id.name), .integer(version), .integer(maxVersions))
                guard try select.step() else { return nil }
                return (select.text(at: 0), try Self.links(to: version, of: id, in: connection))
            }
        }
        guard let row else { return nil }
        return try await Workers.run { () throws(FeedError) in
            try Snapshot(text: DeltaChain.text(of: row.links), idKey: row.idKey).numbered(version)
        }
    }

    package func batches(of id: FeedID, after since: Int, through latest: Int) async throws(FeedError) -> [[UInt8]]? {
        let maxVersions = maxVersions
        let batches = try await run { connection throws(FeedError) -> [[UInt8]] in
            try Self.sql { () throws(SQLiteError) -> [[UInt8]] in
                let select = try connection.cachedStatement("""
                    SELECT v.batch FROM feeds f JOIN versions v ON v.feed = f.id
                    WHERE f.id = ?1 AND ?2 > f.latest - ?4 AND v.version > ?2 AND v.version <= ?3 ORDER BY v.version
                    """)
                try select.bind(.text(id.name), .integer(since), .integer(latest), .integer(maxVersions))
                var batches: [[UInt8]] = []
                while try select.step() { batches.append(select.blob(at: 0)) }
                return batches
            }
        }
        return JSONBatch.stored(batches, after: since, through: latest)
    }

    /// What is kept of version `version` of feed `id` and of the versions before it back to
    /// the last whole one, in version order (``DeltaChain``).
    private static func links(to version: Int, of id: FeedID, in connection: SQLiteConnection) throws(SQLiteError) -> [DeltaChain.Link] {
        let select = try connection.cachedStatement("""
            SELECT delta, body FROM versions WHERE feed = ?1 AND version <= ?2
            AND version >= (SELECT max(version) FROM versions WHERE feed = ?1 AND delta = 0 AND version <= ?2) ORDER BY version
            """)
        try select.bind(.text(id.name), .integer(version))
        var links: [DeltaChain.Link] = []
        while try select.step() { links.append(DeltaChain.Link(isChange: select.integer(at: 0) != 0, body: select.blob(at: 1))) }
        return links
    }

    package func append(_ version: NewVersion, to id: FeedID, settings: FeedSettings, after previous: Int?) async throws(FeedError) -> Bool {
        let (snapshot, answer) = (version.snapshot, version.keptAnswer)
        let maxVersions = maxVersions
        // The change is made on a worker; whether it is kept, or the text whole, is decided
        // in the transaction, by the feed's chain.
        let change = previous == nil ? nil : await Workers.run { DeltaChain.change(of: version) }
        let trimmed = try await run { connection throws(FeedError) -> Int? in
            try Self.sql { () throws(SQLiteError) -> Int? in
                try connection.writeTransaction { () throws(SQLiteError) -> Int? in
                    let latest = try connection.cachedStatement("SELECT latest, chain_bytes FROM feeds WHERE id = ?")
                    try latest.bind(.text(id.name))
                    let current: (version: Int, chainBytes: Int)? = try latest.step() ? (latest.integer(at: 0), latest.integer(at: 1)) : nil
                    guard current?.version == previous else { return nil }
                    let (link, chainBytes) = DeltaChain.link(for: version, change: change, chainBytes: current?.chainBytes ?? 0)
                    try connection.run("""
                        INSERT INTO feeds (id, id_key, latest, unique_identities, chain_bytes, order_by, section_order_by) VALUES (?, ?, ?, ?, ?, ?, ?)
                        ON CONFLICT (id) DO UPDATE SET latest = excluded.latest, chain_bytes = excluded.chain_bytes
                        """,
                        .text(id.name), .text(settings.idKey), .integer(snapshot.version), .integer(settings.uniqueIdentities ? 1 : 0), .integer(chainBytes),
                        settings.order.rows.map { .text($0.description) } ?? .null, settings.order.sections.map { .text($0.description) } ?? .null
                    )
                    try connection.run(
                        "INSERT INTO versions (feed, version, delta, batch, body) VALUES (?, ?, ?, ?, ?)",
                        .text(id.name), .integer(snapshot.version), .integer(link.isChange ? 1 : 0),
                        version.storedBatch.isEmpty ? .null : .blob(version.storedBatch), .blob(link.body)
                    )
                    if let answer { try Self.insert(answer, for: id, into: connection) }
                    try connection.run("DELETE FROM kept_answers WHERE feed = ? AND version <= ?", .text(id.name), .integer(snapshot.version - maxVersions))
                    // Past retention, but for the whole version the oldest retained one's
                    // changes start from, and the changes between.
                    return try connection.run("""
                        DELETE FROM versions WHERE feed = ?1 AND version < coalesce(
                            (SELECT max(version) FROM versions WHERE feed = ?1 AND delta = 0 AND version <= ?2), ?2)
                        """, .text(id.name), .integer(snapshot.version - maxVersions + 1))
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
        return true
    }

    package func keptAnswer(for key: String, of id: FeedID) async throws(FeedError) -> KeptAnswer? {
        let maxVersions = maxVersions
        return try await run { connection throws(FeedError) -> KeptAnswer? in
            try Self.sql { () throws(SQLiteError) -> KeptAnswer? in
                // Kept with a retained version.
                let select = try connection.cachedStatement("""
                    SELECT k.version, k.request, k.changed, k.body FROM kept_answers k JOIN feeds f ON f.id = k.feed
                    WHERE k.feed = ?1 AND k.key = ?2 AND k.version > f.latest - ?3
                    """)
                try select.bind(.text(id.name), .text(key), .integer(maxVersions))
                guard try select.step() else { return nil }
                return KeptAnswer(
                    key: key, request: UInt64(bitPattern: Int64(select.integer(at: 1))), version: select.integer(at: 0),
                    changed: select.integer(at: 2) != 0, body: select.blob(at: 3)
                )
            }
        }
    }

    package func keep(_ answer: KeptAnswer, for id: FeedID) async throws(FeedError) {
        let maxVersions = maxVersions
        try await run { connection throws(FeedError) in
            try Self.sql { () throws(SQLiteError) in
                try connection.writeTransaction { () throws(SQLiteError) in
                    // Only with a version still retained (the feed may have moved on): a row,
                    // the answers it keeps, within those a version may keep.
                    let room = try connection.cachedStatement("""
                        SELECT (SELECT count(*) FROM kept_answers WHERE feed = ?1 AND version = ?2)
                        FROM feeds WHERE id = ?1 AND ?2 > latest - ?3 AND ?2 <= latest
                        """)
                    try room.bind(.text(id.name), .integer(answer.version), .integer(maxVersions))
                    guard try room.step(), room.integer(at: 0) < KeptAnswer.unchangedPerVersion else { return }
                    try Self.insert(answer, for: id, into: connection)
                }
            }
        }
    }

    /// Inserts `answer` (a key is kept once: the first answer stays).
    private static func insert(_ answer: KeptAnswer, for id: FeedID, into connection: SQLiteConnection) throws(SQLiteError) {
        try connection.run("""
            INSERT INTO kept_answers (feed, key, version, request, changed, body) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
            """,
            .text(id.name), .text(answer.key), .integer(answer.version), .integer(Int(Int64(bitPattern: answer.request))),
            .integer(answer.changed ? 1 : 0), .blob(answer.body)
        )
    }

    package func delete(_ id: FeedID) async throws(FeedError) -> Bool {
        let removed = try await run { connection throws(FeedError) -> Int? in
            let removed = try Self.sql { () throws(SQLiteError) -> Int? in
                try connection.writeTransaction { () throws(SQLiteError) -> Int? in
                    try connection.run("DELETE FROM kept_answers WHERE feed = ?", .text(id.name))
                    let count = try connection.run("DELETE FROM versions WHERE feed = ?", .text(id.name))
                    return try connection.run("DELETE FROM feeds WHERE id = ?", .text(id.name)) == 1 ? count : nil
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
        return true
    }

    package func list(after: FeedID?, prefix: String, limit: Int) async throws(FeedError) -> FeedPage {
        try await run { connection throws(FeedError) -> FeedPage in
            try Self.sql { () throws(SQLiteError) -> FeedPage in
                // The prefix's range of ids, by the primary key's index.
                let select = try connection.cachedStatement("SELECT id, latest FROM feeds WHERE id > ? AND id >= ? AND id < ? ORDER BY id LIMIT ?")
                try select.bind(.text(after?.name ?? ""), .text(prefix), .text(FeedID.rangeEnd(ofPrefix: prefix) ?? "\u{7F}"), .integer(limit + 1))
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

    /// Nothing: this process alone writes the database file (docs/feeds.md §11) (this process's writes wake their own
    /// long polls).
    package func observe(_ observer: @escaping @Sendable (FeedChange) -> Void) {}

    package var statistics: FeedStoreStatistics {
        var statistics = counts.withLock { $0 }
        statistics.bytesInMemory = bytesInMemory
        return statistics
    }

    /// The latest snapshots kept in memory.
    package var bytesInMemory: Int { cache.withLock { $0.bytes } }

    /// Keeps the latest snapshot of `id`, dropping others while the cache is over its bound;
    /// with `ifStillVersion`, only when the file's latest is still that version (a read kept
    /// after a write or a deletion would be stale). Runs on the store's queue.
    private func keep(_ stored: StoredSnapshot, for id: FeedID, ifStillVersion version: Int?) {
        if let version {
            guard let latest = try? connection.cachedStatement("SELECT latest FROM feeds WHERE id = ?"),
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
