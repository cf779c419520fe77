import PostgreSQL

/// The tables of the PostgreSQL store, created and migrated by the servers themselves: each
/// connection a server opens first brings the schema to ``migrations``' count, under an
/// advisory lock, so several servers starting at once take turns and the first does it.
enum PostgresSchema {
    /// The statements of each schema version, in order; a version once released is never
    /// changed, only followed.
    static let migrations: [[String]] = [
        [
            // Version 1: feeds (ids in byte order, as every store lists them) and versions
            // (none without its feed: a deletion racing a write leaves no orphan).
            """
            CREATE TABLE batchdiff_feeds (
                id text COLLATE "C" PRIMARY KEY, id_key text NOT NULL, latest bigint NOT NULL)
            """,
            """
            CREATE TABLE batchdiff_versions (
                feed text COLLATE "C" NOT NULL REFERENCES batchdiff_feeds (id) ON DELETE CASCADE,
                version bigint NOT NULL, body bytea NOT NULL, PRIMARY KEY (feed, version))
            """,
        ],
        [
            // Version 2: whether a feed keeps its identities unique (uniqueIdentities).
            "ALTER TABLE batchdiff_feeds ADD COLUMN unique_identities integer NOT NULL DEFAULT 0",
        ],
        [
            // Version 3: the answers of writes under an Idempotency-Key, kept with their
            // version (a server of version 2 never reads or writes them).
            """
            CREATE TABLE batchdiff_kept_answers (
                feed text COLLATE "C" NOT NULL REFERENCES batchdiff_feeds (id) ON DELETE CASCADE,
                key text NOT NULL, version bigint NOT NULL, request bigint NOT NULL, changed integer NOT NULL,
                body bytea NOT NULL, PRIMARY KEY (feed, key))
            """,
        ],
        [
            // Version 4: a version's body may be its change from the one before (`delta`,
            // docs/feeds.md §11); a feed counts the change bytes since its last whole one.
            "ALTER TABLE batchdiff_versions ADD COLUMN delta integer NOT NULL DEFAULT 0",
            "ALTER TABLE batchdiff_feeds ADD COLUMN chain_bytes bigint NOT NULL DEFAULT 0",
        ],
        [
            // Version 5: a version keeps its batch from the one before (NULL when the write
            // made none, as every version before this one), docs/feeds.md §11.
            "ALTER TABLE batchdiff_versions ADD COLUMN batch bytea",
        ],
        [
            // Version 6: a sorted feed's orders (`orderBy`, `sectionOrderBy`, as written;
            // NULL for none), docs/feeds.md §14.
            "ALTER TABLE batchdiff_feeds ADD COLUMN order_by text",
            "ALTER TABLE batchdiff_feeds ADD COLUMN section_order_by text",
        ],
    ]

    /// The advisory lock servers take turns with ("batchdiff" in ASCII).
    private static let lock = 0x62_61_74_63_68_64_69_66

    /// Brings the database's schema to the latest version, in one transaction, when it is
    /// behind (a database already at it needs no rights to create tables). Throws (and
    /// leaves the connection to be dropped) on failure, or when the database's schema is
    /// newer than this server knows.
    static func migrate(_ connection: PostgresConnection, deadline: ContinuousClock.Instant) throws(PostgresError) {
        guard try installedVersion(connection, deadline: deadline) < migrations.count else { return }
        try connection.query("BEGIN", deadline: deadline)
        try connection.query("SELECT pg_advisory_xact_lock($1::bigint)", [.integer(lock)], deadline: deadline)
        try connection.query("CREATE TABLE IF NOT EXISTS batchdiff_schema (version integer NOT NULL)", deadline: deadline)
        // Again under the lock: another server may have migrated meanwhile.
        let current = try installedVersion(connection, deadline: deadline)
        for statement in migrations.dropFirst(current).joined() { try connection.query(statement, deadline: deadline) }
        if current < migrations.count {
            try connection.query("DELETE FROM batchdiff_schema", deadline: deadline)
            try connection.query("INSERT INTO batchdiff_schema (version) VALUES ($1::integer)", [.integer(migrations.count)], deadline: deadline)
        }
        try connection.query("COMMIT", deadline: deadline)
    }

    /// The schema version the database holds (0 for none); throws when it is newer than
    /// this server knows.
    private static func installedVersion(_ connection: PostgresConnection, deadline: ContinuousClock.Instant) throws(PostgresError) -> Int {
        let exists = try connection.query("SELECT to_regclass('batchdiff_schema') IS NOT NULL", deadline: deadline).integer(0, 0) == 1
        guard exists else { return 0 }
        let version = try connection.query("SELECT coalesce(max(version), 0) FROM batchdiff_schema", deadline: deadline).integer(0, 0)
        guard version <= migrations.count else {
            throw PostgresError(kind: .statement, message: "the database's schema is version \(version), newer than this server's \(migrations.count): upgrade the server")
        }
        return version
    }
}
