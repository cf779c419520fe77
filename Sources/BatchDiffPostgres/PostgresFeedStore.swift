import BatchDiffFeeds
import BatchDiffJSON
import Glibc
import Logging
import PostgreSQL
import Synchronization

/// Feeds in a PostgreSQL database shared by any number of servers: every server answers
/// every feed, and every feed survives restarts and `kill -9` of any server.
///
/// - Each write is one statement, so one transaction: the version, the feed's new latest
///   and the versions retention drops, all or nothing; a `NOTIFY` after its commit tells
///   every server.
///   It stores the version only on top of the one it was made from (`If-Match` holds across
///   servers: of two racing writers, one finds the feed moved on).
/// - Every read asks the database for the feed's latest version (a server cannot know it
///   otherwise); the snapshot itself is read only when this server has not kept it, within
///   half of `maxBytes`. A database that cannot be reached or does not answer in time
///   fails the call with ``FeedError/storeUnavailable(_:)`` within
///   ``PostgresConnectionPool/callTimeout``; nothing is answered from what was last seen.
/// - Fingerprints are not kept in the database: each server computes them from the
///   snapshots it reads, with its own seed, and never shows them.
public final class PostgresFeedStore: FeedStore {
    private let database: PostgresDatabase
    private let pool: PostgresConnectionPool
    private let listener: PostgresListener
    private let maxVersions: Int
    private let cache: Mutex<LatestSnapshotCache>
    private let observers = FeedObservers()

    /// The store in the database at `conninfo` (a libpq URI such as
    /// `postgres://user@host:5432/db`), keeping `maxVersions` versions per feed and up to
    /// `maxBytes` of snapshots in memory. Throws only for a `conninfo` libpq cannot read: a
    /// database that cannot be reached yet is waited for (the store is unavailable until
    /// then), so servers and database may start in any order.
    public init(conninfo: String, maxVersions: Int, maxBytes: Int, logger: Logger) throws(FeedError) {
        do throws(PostgresError) {
            database = try PostgresDatabase(conninfo: conninfo, logger: logger)
        } catch {
            throw .internalFailure("not a PostgreSQL connection URI: \(ConninfoRedaction.redacted(error.message, of: conninfo))")
        }
        self.maxVersions = maxVersions
        // Half of the memory feeds may hold; the answers kept have the rest.
        cache = Mutex(LatestSnapshotCache(bound: maxBytes / 2))
        pool = PostgresConnectionPool(database: database, size: 4)
        listener = PostgresListener(database: database, pool: pool, observers: observers)
        listener.start()
    }

    public func latest(of id: FeedID) async throws(FeedError) -> StoredSnapshot? {
        let cached = cache.withLock { $0[id] }
        let rows = try await pool.run(retry: true) { connection, deadline throws(PostgresError) in
            // The body only when it is not the version kept.
            try connection.query("""
                SELECT f.id_key, f.latest, CASE WHEN f.latest = $2 THEN NULL ELSE v.body END, f.unique_identities
                FROM batchdiff_feeds f JOIN batchdiff_versions v ON v.feed = f.id AND v.version = f.latest WHERE f.id = $1
                """, [.text(id.name), .integer(cached?.snapshot.version ?? -1)], deadline: deadline)
        }
        guard !rows.isEmpty else {
            cache.withLock { $0.remove(id) }
            return nil
        }
        if rows.isNull(0, 2), let cached { return cached }
        let (version, body) = (rows.integer(0, 1), rows.bytes(0, 2))
        let settings = FeedSettings(idKey: rows.text(0, 0), uniqueIdentities: rows.integer(0, 3) != 0)
        let found = StoredSnapshot(settings: settings, snapshot: try await Workers.run { () throws(FeedError) in
            try Snapshot(text: body, idKey: settings.idKey).numbered(version)
        })
        cache.withLock { cache in
            if (cache[id]?.snapshot.version ?? .min) < version { cache.keep(found, for: id) }
        }
        return found
    }

    public func snapshot(at version: Int, of id: FeedID) async throws(FeedError) -> Snapshot? {
        let rows = try await pool.run(retry: true) { connection, deadline throws(PostgresError) in
            try connection.query("""
                SELECT f.id_key, v.body FROM batchdiff_feeds f JOIN batchdiff_versions v ON v.feed = f.id
                WHERE f.id = $1 AND v.version = $2
                """, [.text(id.name), .integer(version)], deadline: deadline)
        }
        guard !rows.isEmpty else { return nil }
        let (idKey, body) = (rows.text(0, 0), rows.bytes(0, 1))
        return try await Workers.run { () throws(FeedError) in try Snapshot(text: body, idKey: idKey).numbered(version) }
    }

    public func append(
        _ snapshot: Snapshot, to id: FeedID, settings: FeedSettings, after previous: Int?, keeping answer: KeptAnswer?
    ) async throws(FeedError) -> Bool {
        let version = snapshot.version
        let body = snapshot.bytes
        let stored = try await pool.run(margin: Self.commitMargin) { [maxVersions] connection, deadline throws(PostgresError) -> Bool in
            let rows: PostgresRows
            if let previous {
                // The kept answer rides along ($9 = 0: the write has none).
                rows = try Self.change(connection, """
                    WITH moved AS (
                        UPDATE batchdiff_feeds SET latest = $2::bigint WHERE id = $1::text AND latest = $4::bigint RETURNING id),
                    stored AS (INSERT INTO batchdiff_versions (feed, version, body) SELECT id, $2::bigint, $3::bytea FROM moved RETURNING 1),
                    trimmed AS (DELETE FROM batchdiff_versions WHERE feed IN (SELECT id FROM moved) AND version <= $5::bigint RETURNING 1),
                    trimmed_answers AS (DELETE FROM batchdiff_kept_answers WHERE feed IN (SELECT id FROM moved) AND version <= $5::bigint),
                    kept AS (
                        INSERT INTO batchdiff_kept_answers (feed, key, version, request, changed, body)
                        SELECT id, $6::text, $2::bigint, $7::bigint, 1, $8::bytea FROM moved WHERE $9::integer = 1
                        ON CONFLICT DO NOTHING)
                    SELECT (SELECT count(*) FROM stored), (SELECT count(*) FROM trimmed)
                    """, [
                        .text(id.name), .integer(version), .bytes(body), .integer(previous), .integer(version - maxVersions),
                        .text(answer?.key ?? ""), .integer(Int(Int64(bitPattern: answer?.request ?? 0))), .bytes(answer?.body ?? []),
                        .integer(answer == nil ? 0 : 1),
                    ],
                    deadline: deadline)
            } else {
                rows = try Self.change(connection, """
                    WITH created AS (
                        INSERT INTO batchdiff_feeds (id, id_key, latest, unique_identities) VALUES ($1::text, $4::text, $2::bigint, $5::integer)
                        ON CONFLICT (id) DO NOTHING RETURNING id),
                    stored AS (INSERT INTO batchdiff_versions (feed, version, body) SELECT id, $2::bigint, $3::bytea FROM created RETURNING 1)
                    SELECT (SELECT count(*) FROM stored)
                    """, [.text(id.name), .integer(version), .bytes(body), .text(settings.idKey), .integer(settings.uniqueIdentities ? 1 : 0)],
                    deadline: deadline)
            }
            guard rows.integer(0, 0) == 1 else { return false }
            Self.notify(.appended(id, version: version), on: connection, deadline: deadline)
            return true
        }
        guard stored else { return false }
        cache.withLock { $0.keep(StoredSnapshot(settings: settings, snapshot: snapshot), for: id) }
        observers.notify(.appended(id, version: version))
        return true
    }

    public func keptAnswer(for key: String, of id: FeedID) async throws(FeedError) -> KeptAnswer? {
        let rows = try await pool.run(retry: true) { connection, deadline throws(PostgresError) in
            try connection.query(
                "SELECT version, request, changed, body FROM batchdiff_kept_answers WHERE feed = $1 AND key = $2",
                [.text(id.name), .text(key)], deadline: deadline
            )
        }
        guard !rows.isEmpty else { return nil }
        return KeptAnswer(
            key: key, request: UInt64(bitPattern: Int64(rows.integer(0, 1))), version: rows.integer(0, 0), changed: rows.integer(0, 2) != 0,
            body: rows.bytes(0, 3)
        )
    }

    public func keep(_ answer: KeptAnswer, for id: FeedID) async throws(FeedError) {
        _ = try await pool.run(margin: Self.commitMargin) { connection, deadline throws(PostgresError) in
            // Only with a version still retained (the feed may have moved on and trimmed it).
            try Self.change(connection, """
                WITH kept AS (
                    INSERT INTO batchdiff_kept_answers (feed, key, version, request, changed, body)
                    SELECT feed, $2::text, $3::bigint, $4::bigint, $5::integer, $6::bytea FROM batchdiff_versions
                    WHERE feed = $1::text AND version = $3::bigint
                    ON CONFLICT DO NOTHING RETURNING 1)
                SELECT (SELECT count(*) FROM kept)
                """, [
                    .text(id.name), .text(answer.key), .integer(answer.version), .integer(Int(Int64(bitPattern: answer.request))),
                    .integer(answer.changed ? 1 : 0), .bytes(answer.body),
                ], deadline: deadline)
        }
    }

    public func delete(_ id: FeedID) async throws(FeedError) -> Bool {
        let deleted = try await pool.run(margin: Self.commitMargin) { connection, deadline throws(PostgresError) -> Bool in
            // Versions are deleted here, before the clock check, rather than by the cascade
            // (which runs after it); the cascade catches a version a racing write added.
            let deleted = try Self.change(connection, """
                WITH gone AS (DELETE FROM batchdiff_feeds WHERE id = $1::text RETURNING id),
                versions AS (DELETE FROM batchdiff_versions WHERE feed IN (SELECT id FROM gone) RETURNING 1)
                SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM versions)
                """, [.text(id.name)], deadline: deadline).integer(0, 0) == 1
            if deleted { Self.notify(.deleted(id), on: connection, deadline: deadline) }
            return deleted
        }
        cache.withLock { $0.remove(id) }
        guard deleted else { return false }
        observers.notify(.deleted(id))
        return true
    }

    /// Tells every server of `change` (`NOTIFY`), after its commit and apart from it: a
    /// notification inside the change's transaction would make its commit wait for the
    /// listeners' queue, so that a change could commit late, after its client was told it
    /// failed. A notification lost here (the connection broke just after the commit) leaves
    /// the other servers' long polls to their deadline, or to the `missed` every listener
    /// hears when it loses the database.
    private static func notify(_ change: FeedChange, on connection: PostgresConnection, deadline: ContinuousClock.Instant) {
        _ = try? connection.query("SELECT pg_notify($1::text, $2::text)", [.text(ChangeNotice.channel), .text(ChangeNotice.payload(of: change))], deadline: deadline)
    }

    /// How long before its call's deadline a change must have ended to be committed.
    private static let commitMargin = Duration.seconds(1)

    /// Runs `sql`, a change whose statement ends in a `SELECT` of counts, so that it commits
    /// only if it ends ``commitMargin`` before the call's `deadline` (when the call answers 503):
    /// a check after the counts (evaluated after the changes they read) fails the statement
    /// otherwise. Without it, a statement sent to a database that then froze would finish
    /// when the database thawed, storing a write its client was told failed. What remains is
    /// a database that stops in the instant between that check and its commit. The servers'
    /// and the database's clocks must agree to well within that second, as NTP keeps them.
    private static func change(
        _ connection: PostgresConnection, _ sql: String, _ parameters: [PostgresValue], deadline: ContinuousClock.Instant
    ) throws(PostgresError) -> PostgresRows {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let remaining = (ContinuousClock.now.duration(to: deadline) - commitMargin).components
        let commitBy = now.tv_sec * 1_000_000 + now.tv_nsec / 1000 + Int(remaining.seconds) * 1_000_000
            + Int(remaining.attoseconds / 1_000_000_000_000)
        let checked = sql + ", 1 / (clock_timestamp() < to_timestamp($\(parameters.count + 1)::float8 / 1e6))::int"
        do throws(PostgresError) {
            return try connection.query(checked, parameters + [.integer(commitBy)], deadline: deadline)
        } catch where error.sqlstate == "22012" {  // division by zero: the check failed
            throw PostgresError(kind: .timeout, message: "the change reached the database too late; nothing was stored")
        }
    }

    public func list(after: FeedID?, limit: Int) async throws(FeedError) -> FeedPage {
        let rows = try await pool.run(retry: true) { connection, deadline throws(PostgresError) in
            try connection.query(
                "SELECT id, latest FROM batchdiff_feeds WHERE id > $1 ORDER BY id LIMIT $2",
                [.text(after?.name ?? ""), .integer(limit + 1)], deadline: deadline
            )
        }
        let feeds = (0..<min(rows.count, limit)).compactMap { row in
            (try? FeedID(rows.text(row, 0))).map { FeedSummary(id: $0, version: rows.integer(row, 1)) }
        }
        return FeedPage(feeds: feeds, more: rows.count > limit)
    }

    public func observe(_ observer: @escaping @Sendable (FeedChange) -> Void) {
        observers.add(observer)
    }

    /// Feeds and versions as last counted (every few seconds), and the snapshots kept.
    public var statistics: FeedStoreStatistics {
        let counts = listener.lastCounts
        return FeedStoreStatistics(feeds: counts.feeds, versions: counts.versions, bytesInMemory: bytesInMemory)
    }

    /// The latest snapshots kept in memory.
    public var bytesInMemory: Int { cache.withLock { $0.bytes } }

    /// Whether the database answered the last ping (every second) in time.
    public var isAvailable: Bool { database.isAvailable }
}
