import BatchDiffFeeds
import BatchDiffJSON
import Glibc
import Logging
import PostgreSQL
import Synchronization

/// Feeds in a PostgreSQL database shared by any number of servers: every server answers
/// every feed, and every feed survives restarts and `kill -9` of any server.
///
/// - Each write is one statement, so one transaction: the version (as its change from the
///   one before, or whole: ``DeltaChain``, by the feed's chain read just before), the
///   feed's new latest and the versions retention drops, all or nothing; a `NOTIFY` after
///   its commit tells every server.
///   It stores the version only on top of the one it was made from (`If-Match` holds across
///   servers: of two racing writers, one finds the feed moved on).
/// - Every read asks the database for the feed's latest version (a server cannot know it
///   otherwise); a snapshot this server keeps (within half of `maxBytes`) is brought
///   forward by the changes after it, and only one it does not keep is read whole. A database that cannot be reached or does not answer in time
///   fails the call with ``FeedError/storeUnavailable(_:)`` within
///   ``PostgresConnectionPool/callTimeout``; nothing is answered from what was last seen.
/// - Fingerprints are not kept in the database: each server computes them from the
///   snapshots it reads, with its own seed, and never shows them.
package final class PostgresFeedStore: FeedStore {
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
    package init(conninfo: String, maxVersions: Int, maxBytes: Int, logger: Logger) throws(FeedError) {
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

    package func latest(of id: FeedID) async throws(FeedError) -> StoredSnapshot? {
        // Brought forward from the version kept by the changes after it; read from the last
        // whole version when none is kept, or the kept one is not of this series.
        var cached = cache.withLock { $0[id] }
        while true {
            let rows = try await pool.run(retry: true) { [cached] connection, deadline throws(PostgresError) in
                try connection.query("""
                    SELECT f.id_key, f.latest, f.unique_identities, v.version, v.delta, v.body, f.order_by, f.section_order_by
                    FROM batchdiff_feeds f LEFT JOIN batchdiff_versions v ON v.feed = f.id AND v.version <= f.latest
                        AND v.version >= GREATEST($2::bigint + 1, (
                            SELECT max(w.version) FROM batchdiff_versions w WHERE w.feed = f.id AND w.delta = 0 AND w.version <= f.latest))
                    WHERE f.id = $1 ORDER BY v.version
                    """, [.text(id.name), .integer(cached?.snapshot.version ?? -1)], deadline: deadline)
            }
            guard !rows.isEmpty else {
                cache.withLock { $0.remove(id) }
                return nil
            }
            let version = rows.integer(0, 1)
            let settings = try FeedSettings(
                stored: rows.text(0, 0), uniqueIdentities: rows.integer(0, 2) != 0,
                orderBy: rows.isNull(0, 6) ? nil : rows.text(0, 6), sectionOrderBy: rows.isNull(0, 7) ? nil : rows.text(0, 7)
            )
            let links = rows.isNull(0, 3) ? [] : (0..<rows.count).map { DeltaChain.Link(isChange: rows.integer($0, 4) != 0, body: rows.bytes($0, 5)) }
            if links.isEmpty, let cached, cached.snapshot.version == version { return cached }
            // Changes that start from the version kept must follow it.
            let fromCached = links.first?.isChange == true ? cached.flatMap { rows.integer(0, 3) == $0.snapshot.version + 1 ? $0.snapshot.bytes : nil } : nil
            guard !links.isEmpty, links.first?.isChange == false || fromCached != nil else {
                guard cached != nil else { throw .internalFailure("feed \(id)'s latest version \(version) is not in the database") }
                cached = nil
                continue
            }
            let found = StoredSnapshot(settings: settings, snapshot: try await Workers.run { () throws(FeedError) in
                try Snapshot(text: DeltaChain.text(of: links, from: fromCached), idKey: settings.idKey).numbered(version)
            })
            cache.withLock { cache in
                if (cache[id]?.snapshot.version ?? .min) < version { cache.keep(found, for: id) }
            }
            return found
        }
    }

    package func snapshot(at version: Int, of id: FeedID) async throws(FeedError) -> Snapshot? {
        let rows = try await pool.run(retry: true) { [maxVersions] connection, deadline throws(PostgresError) in
            // Retained: one of the last `maxVersions` (older ones may stay as the start of a
            // retained one's changes).
            try connection.query("""
                SELECT f.id_key, v.version, v.delta, v.body FROM batchdiff_feeds f JOIN batchdiff_versions v ON v.feed = f.id
                WHERE f.id = $1 AND $2::bigint <= f.latest AND $2::bigint > f.latest - $3::bigint AND v.version <= $2::bigint
                    AND v.version >= (SELECT max(w.version) FROM batchdiff_versions w WHERE w.feed = f.id AND w.delta = 0 AND w.version <= $2::bigint)
                ORDER BY v.version
                """, [.text(id.name), .integer(version), .integer(maxVersions)], deadline: deadline)
        }
        guard !rows.isEmpty, rows.integer(rows.count - 1, 1) == version else { return nil }
        let idKey = rows.text(0, 0)
        let links = (0..<rows.count).map { DeltaChain.Link(isChange: rows.integer($0, 2) != 0, body: rows.bytes($0, 3)) }
        return try await Workers.run { () throws(FeedError) in try Snapshot(text: DeltaChain.text(of: links), idKey: idKey).numbered(version) }
    }

    package func batches(of id: FeedID, after since: Int, through latest: Int) async throws(FeedError) -> [[UInt8]]? {
        let rows = try await pool.run(retry: true) { [maxVersions] connection, deadline throws(PostgresError) in
            // From a retained version (as in `snapshot(at:of:)`).
            try connection.query("""
                SELECT coalesce(v.batch, ''::bytea) FROM batchdiff_feeds f JOIN batchdiff_versions v ON v.feed = f.id
                WHERE f.id = $1 AND $2::bigint > f.latest - $4::bigint AND v.version > $2::bigint AND v.version <= $3::bigint
                ORDER BY v.version
                """, [.text(id.name), .integer(since), .integer(latest), .integer(maxVersions)], deadline: deadline)
        }
        return JSONBatch.stored((0..<rows.count).map { rows.bytes($0, 0) }, after: since, through: latest)
    }

    package func append(_ new: NewVersion, to id: FeedID, settings: FeedSettings, after previous: Int?) async throws(FeedError) -> Bool {
        let (snapshot, answer) = (new.snapshot, new.keptAnswer)
        let version = snapshot.version
        // The change is made on a worker; whether it is kept, or the text whole, is decided
        // by the feed's chain as the database has it.
        let change = previous == nil ? nil : await Workers.run { DeltaChain.change(of: new) }
        let stored = try await pool.run(margin: Self.commitMargin) { [maxVersions] connection, deadline throws(PostgresError) -> Bool in
            let rows: PostgresRows
            if let previous {
                let chain = try connection.query(
                    "SELECT chain_bytes FROM batchdiff_feeds WHERE id = $1 AND latest = $2::bigint", [.text(id.name), .integer(previous)], deadline: deadline
                )
                guard !chain.isEmpty else { return false }  // moved on
                let (link, chainBytes) = DeltaChain.link(for: new, change: change, chainBytes: chain.integer(0, 0))
                // The kept answer rides along ($9 = 0: the write has none).
                rows = try Self.change(connection, """
                    WITH moved AS (
                        UPDATE batchdiff_feeds SET latest = $2::bigint, chain_bytes = $11::bigint WHERE id = $1::text AND latest = $4::bigint RETURNING id),
                    stored AS (
                        INSERT INTO batchdiff_versions (feed, version, body, delta, batch)
                        SELECT id, $2::bigint, $3::bytea, $10::integer, nullif($12::bytea, ''::bytea) FROM moved RETURNING 1),
                    trimmed AS (
                        DELETE FROM batchdiff_versions WHERE feed IN (SELECT id FROM moved) AND version < coalesce((
                            SELECT max(w.version) FROM batchdiff_versions w WHERE w.feed = $1::text AND w.delta = 0 AND w.version <= $5::bigint + 1
                        ), $5::bigint + 1) RETURNING 1),
                    trimmed_answers AS (DELETE FROM batchdiff_kept_answers WHERE feed IN (SELECT id FROM moved) AND version <= $5::bigint),
                    kept AS (
                        INSERT INTO batchdiff_kept_answers (feed, key, version, request, changed, body)
                        SELECT id, $6::text, $2::bigint, $7::bigint, 1, $8::bytea FROM moved WHERE $9::integer = 1
                        ON CONFLICT DO NOTHING)
                    SELECT (SELECT count(*) FROM stored), (SELECT count(*) FROM trimmed)
                    """, [
                        .text(id.name), .integer(version), .bytes(link.body), .integer(previous), .integer(version - maxVersions),
                        .text(answer?.key ?? ""), .integer(Int(Int64(bitPattern: answer?.request ?? 0))), .bytes(answer?.body ?? []),
                        .integer(answer == nil ? 0 : 1), .integer(link.isChange ? 1 : 0), .integer(chainBytes), .bytes(new.storedBatch),
                    ],
                    deadline: deadline)
            } else {
                rows = try Self.change(connection, """
                    WITH created AS (
                        INSERT INTO batchdiff_feeds (id, id_key, latest, unique_identities, order_by, section_order_by)
                        VALUES ($1::text, $4::text, $2::bigint, $5::integer, nullif($6::text, ''), nullif($7::text, ''))
                        ON CONFLICT (id) DO NOTHING RETURNING id),
                    stored AS (INSERT INTO batchdiff_versions (feed, version, body) SELECT id, $2::bigint, $3::bytea FROM created RETURNING 1)
                    SELECT (SELECT count(*) FROM stored)
                    """, [
                        .text(id.name), .integer(version), .bytes(snapshot.bytes), .text(settings.idKey), .integer(settings.uniqueIdentities ? 1 : 0),
                        .text(settings.order.rows?.description ?? ""), .text(settings.order.sections?.description ?? ""),
                    ],
                    deadline: deadline)
            }
            guard rows.integer(0, 0) == 1 else { return false }
            Self.notify(.appended(id, version: version), on: connection, deadline: deadline)
            return true
        }
        guard stored else { return false }
        cache.withLock { $0.keep(StoredSnapshot(settings: settings, snapshot: snapshot), for: id) }
        return true
    }

    package func keptAnswer(for key: String, of id: FeedID) async throws(FeedError) -> KeptAnswer? {
        let rows = try await pool.run(retry: true) { [maxVersions] connection, deadline throws(PostgresError) in
            // Kept with a retained version.
            try connection.query("""
                SELECT k.version, k.request, k.changed, k.body FROM batchdiff_kept_answers k JOIN batchdiff_feeds f ON f.id = k.feed
                WHERE k.feed = $1 AND k.key = $2 AND k.version > f.latest - $3::bigint
                """, [.text(id.name), .text(key), .integer(maxVersions)], deadline: deadline)
        }
        guard !rows.isEmpty else { return nil }
        return KeptAnswer(
            key: key, request: UInt64(bitPattern: Int64(rows.integer(0, 1))), version: rows.integer(0, 0), changed: rows.integer(0, 2) != 0,
            body: rows.bytes(0, 3)
        )
    }

    package func keep(_ answer: KeptAnswer, for id: FeedID) async throws(FeedError) {
        _ = try await pool.run(margin: Self.commitMargin) { [maxVersions] connection, deadline throws(PostgresError) in
            // Only with a version still retained (the feed may have moved on), and within the
            // answers a version keeps.
            try Self.change(connection, """
                WITH kept AS (
                    INSERT INTO batchdiff_kept_answers (feed, key, version, request, changed, body)
                    SELECT id, $2::text, $3::bigint, $4::bigint, $5::integer, $6::bytea FROM batchdiff_feeds
                    WHERE id = $1::text AND $3::bigint <= latest AND $3::bigint > latest - $7::bigint
                        AND (SELECT count(*) FROM batchdiff_kept_answers WHERE feed = $1::text AND version = $3::bigint) < $8::bigint
                    ON CONFLICT DO NOTHING RETURNING 1)
                SELECT (SELECT count(*) FROM kept)
                """, [
                    .text(id.name), .text(answer.key), .integer(answer.version), .integer(Int(Int64(bitPattern: answer.request))),
                    .integer(answer.changed ? 1 : 0), .bytes(answer.body), .integer(maxVersions), .integer(KeptAnswer.unchangedPerVersion),
                ], deadline: deadline)
        }
    }

    package func delete(_ id: FeedID) async throws(FeedError) -> Bool {
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
        return deleted
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

    package func list(after: FeedID?, prefix: String, limit: Int) async throws(FeedError) -> FeedPage {
        let rows = try await pool.run(retry: true) { connection, deadline throws(PostgresError) in
            // The prefix's range of ids (compared byte by byte: the column's collation is "C").
            try connection.query(
                "SELECT id, latest FROM batchdiff_feeds WHERE id > $1 AND id >= $2 AND id < $3 ORDER BY id LIMIT $4",
                [.text(after?.name ?? ""), .text(prefix), .text(FeedID.rangeEnd(ofPrefix: prefix) ?? "\u{7F}"), .integer(limit + 1)], deadline: deadline
            )
        }
        let feeds = (0..<min(rows.count, limit)).compactMap { row in
            (try? FeedID(rows.text(row, 0))).map { FeedSummary(id: $0, version: rows.integer(row, 1)) }
        }
        return FeedPage(feeds: feeds, more: rows.count > limit)
    }

    package func observe(_ observer: @escaping @Sendable (FeedChange) -> Void) {
        observers.add(observer)
    }

    /// Feeds and versions as last counted (every few seconds), and the snapshots kept.
    package var statistics: FeedStoreStatistics {
        let counts = listener.lastCounts
        return FeedStoreStatistics(feeds: counts.feeds, versions: counts.versions, bytesInMemory: bytesInMemory)
    }

    /// The latest snapshots kept in memory.
    package var bytesInMemory: Int { cache.withLock { $0.bytes } }

    /// Whether the database answered the last ping (every second) in time.
    package var isAvailable: Bool { database.isAvailable }
}
