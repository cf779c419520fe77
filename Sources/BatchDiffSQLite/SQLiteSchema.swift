import SQLite

/// The schema of a feeds file, by the steps that made it (its version is the file's `PRAGMA
/// user_version`): 0 for files written before versions were kept as changes (every version
/// whole), 1 since, 2 since versions keep their batches (in a table with rowids), 3 since
/// feeds keep their orders. A file of any earlier version is brought forward when it is opened.
enum SQLiteSchema {
    static let migrator = SQLiteMigrator(initial: createVersion0, steps: [
        SQLiteMigrator.Step(version: 1, migrate: keepVersionsAsChanges),
        SQLiteMigrator.Step(version: 2, migrate: keepBatchesWithVersions),
        SQLiteMigrator.Step(version: 3, migrate: keepOrdersWithFeeds),
    ])

    /// Version 0's tables where they are missing; a file made before feeds kept
    /// `uniqueIdentities` gains the column (false).
    private static func createVersion0(_ connection: SQLiteConnection) throws(SQLiteError) {
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
        if try connection.integer("SELECT count(*) FROM pragma_table_info('feeds') WHERE name = 'unique_identities'") == 0 {
            try connection.execute("ALTER TABLE feeds ADD COLUMN unique_identities INTEGER NOT NULL DEFAULT 0")
        }
    }

    /// Version 1: a version's body may be its change from the one before (`delta`); a feed
    /// counts the change bytes since its last whole one.
    private static func keepVersionsAsChanges(_ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.execute("""
            ALTER TABLE versions ADD COLUMN delta INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE feeds ADD COLUMN chain_bytes INTEGER NOT NULL DEFAULT 0;
            """)
    }

    /// Version 2: versions keep their batch from the one before (NULL for those written
    /// before), and the table is one with rowids, its bodies last: in a WITHOUT ROWID table a
    /// search that meets a whole version's row reads all its overflow pages (a
    /// 1,000,000-row feed's `PATCH` read its 40 MB first version each time), as does any
    /// column after `body`.
    private static func keepBatchesWithVersions(_ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.execute("""
            CREATE TABLE versions_2 (
                feed TEXT NOT NULL, version INTEGER NOT NULL, delta INTEGER NOT NULL, batch BLOB, body BLOB NOT NULL,
                PRIMARY KEY (feed, version)
            );
            INSERT INTO versions_2 (feed, version, delta, body) SELECT feed, version, delta, body FROM versions;
            DROP TABLE versions;
            ALTER TABLE versions_2 RENAME TO versions;
            CREATE INDEX versions_whole ON versions (feed, delta, version);
            """)
    }

    /// Version 3: a sorted feed's orders (`orderBy`, `sectionOrderBy`, as written; NULL for
    /// none).
    private static func keepOrdersWithFeeds(_ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.execute("""
            ALTER TABLE feeds ADD COLUMN order_by TEXT;
            ALTER TABLE feeds ADD COLUMN section_order_by TEXT;
            """)
    }
}
