import PostgreSQL

/// The tables of the PostgreSQL store, created and migrated by the servers themselves: each
/// connection a server opens first brings the schema to ``migrations``' count, under an
/// advisory lock, so several servers starting at once take turns and the first does it.
enum PostgresSchema {
    /// The statements of each schema version, in order; a version once released is never
    /// changed, only followed.
    static let migrations: [[String]] = [
        [
            // Version 1: feeds (ids in byte order, as every store lists them) and versions.
            """
            CREATE TABLE batchdiff_feeds (
                id text COLLATE "C" PRIMARY KEY, id_key text NOT NULL, latest bigint NOT NULL)
            """,
            """
            CREATE TABLE batchdiff_versions (
                feed text COLLATE "C" NOT NULL, version bigint NOT NULL, body bytea NOT NULL,
                PRIMARY KEY (feed, version))
            """,
        ],
    ]

    /// The advisory lock servers take turns with ("batchdiff" in ASCII).
    private static let lock = 0x62_61_74_63_68_64_69_66

    /// Brings the database's schema to the latest version, in one transaction. Throws (and
    /// leaves the connection to be dropped) on failure, or when the database's schema is
    /// newer than this server knows.
    static func migrate(_ connection: PostgresConnection, deadline: ContinuousClock.Instant) throws(PostgresError) {
        try connection.query("BEGIN", deadline: deadline)
        try connection.query("SELECT pg_advisory_xact_lock($1::bigint)", [.integer(lock)], deadline: deadline)
        try connection.query("CREATE TABLE IF NOT EXISTS batchdiff_schema (version integer NOT NULL)", deadline: deadline)
        let current = try connection.query("SELECT coalesce(max(version), 0) FROM batchdiff_schema", deadline: deadline).integer(0, 0)
        guard current <= migrations.count else {
            throw PostgresError(kind: .statement, message: "the database's schema is version \(current), newer than this server's \(migrations.count): upgrade the server")
        }
        for statement in migrations.dropFirst(current).joined() { try connection.query(statement, deadline: deadline) }
        if current < migrations.count {
            try connection.query("DELETE FROM batchdiff_schema", deadline: deadline)
            try connection.query("INSERT INTO batchdiff_schema (version) VALUES ($1::integer)", [.integer(migrations.count)], deadline: deadline)
        }
        try connection.query("COMMIT", deadline: deadline)
    }
}
