import Foundation
import SQLite
import XCTest

/// The thin layer over SQLite: statements kept and reset, and the migrator's steps.
final class SQLiteConnectionTests: XCTestCase {
    private var path: String!

    override func setUp() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("sqlite-\(UUID().uuidString).db").path
    }

    override func tearDown() {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// A kept statement is compiled once and reused; left before its last row it holds its
    /// table (a DROP fails, "table is locked") until ``SQLiteConnection/resetStatements()``.
    func testAKeptStatementIsReusedAndLetGoWhenReset() throws {
        let connection = try SQLiteConnection(path: path)
        try connection.execute("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3)")
        let select = try connection.cachedStatement("SELECT x FROM t WHERE x >= ? ORDER BY x")
        XCTAssertTrue(select === (try connection.cachedStatement("SELECT x FROM t WHERE x >= ? ORDER BY x")))
        try select.bind(.integer(2))
        XCTAssertTrue(try select.step())
        XCTAssertEqual(select.integer(at: 0), 2)
        try select.bind(.integer(1))  // binding starts a new run
        XCTAssertTrue(try select.step())
        XCTAssertEqual(select.integer(at: 0), 1)
        XCTAssertThrowsError(try connection.execute("DROP TABLE t"), "a run left open holds its table")
        connection.resetStatements()
        XCTAssertNoThrow(try connection.execute("DROP TABLE t"))
    }

    /// `run` binds, runs to the end, and counts the rows changed; an error names SQLite's
    /// message.
    func testRunCountsTheRowsChanged() throws {
        let connection = try SQLiteConnection(path: path)
        try connection.execute("CREATE TABLE t (x INTEGER PRIMARY KEY)")
        XCTAssertEqual(try connection.run("INSERT INTO t VALUES (?), (?)", .integer(1), .integer(2)), 2)
        XCTAssertEqual(try connection.run("DELETE FROM t WHERE x > ?", .integer(0)), 2)
        XCTAssertThrowsError(try connection.run("INSERT INTO missing VALUES (?)", .integer(1))) { error in
            XCTAssertTrue((error as? SQLiteError)?.message.contains("no such table: missing") == true, "\(error)")
        }
    }

    /// Each step runs once, in order, from the version the file is of; a file of a version
    /// past the last step is left as it is; a step that fails leaves the file as it was.
    func testTheMigratorRunsEachStepOnceFromTheFilesVersion() throws {
        let migrator = SQLiteMigrator(initial: { connection throws(SQLiteError) in
            try connection.execute("CREATE TABLE IF NOT EXISTS log (step INTEGER)")
        }, steps: [
            SQLiteMigrator.Step(version: 1) { connection throws(SQLiteError) in try connection.execute("INSERT INTO log VALUES (1)") },
            SQLiteMigrator.Step(version: 3) { connection throws(SQLiteError) in try connection.execute("INSERT INTO log VALUES (3)") },
        ])
        XCTAssertEqual(migrator.latestVersion, 3)
        let connection = try SQLiteConnection(path: path)
        XCTAssertEqual(try migrator.migrate(connection), 0)
        XCTAssertEqual(try migrator.migrate(connection), 3)
        XCTAssertEqual(try connection.integer("SELECT group_concat(step, '') FROM log"), 13, "steps 1 and 3, once each")
        XCTAssertEqual(try connection.integer("PRAGMA user_version"), 3)

        try connection.execute("PRAGMA user_version = 9")
        XCTAssertEqual(try migrator.migrate(connection), 9, "a newer file is told, for the caller to refuse")
        XCTAssertEqual(try connection.integer("PRAGMA user_version"), 9)

        let failing = SQLiteMigrator(initial: { _ throws(SQLiteError) in }, steps: [
            SQLiteMigrator.Step(version: 10) { connection throws(SQLiteError) in try connection.execute("INSERT INTO log VALUES (10)") },
            SQLiteMigrator.Step(version: 11) { connection throws(SQLiteError) in try connection.execute("INSERT INTO nowhere VALUES (1)") },
        ])
        XCTAssertThrowsError(try failing.migrate(connection))
        XCTAssertEqual(try connection.integer("PRAGMA user_version"), 9, "nothing of a failed migration stays")
        XCTAssertEqual(try connection.integer("SELECT count(*) FROM log WHERE step = 10"), 0)
    }
}
