import BatchDiff
import Foundation
import TestSupport
import XCTest

/// Feeds that follow a real PostgreSQL, operated (docs/sources.md §2, §5, §6): the shapes
/// read again on `SIGHUP`, a `kill -9` during commits with an SQLite store, the database
/// stopped for three seconds. Whatever happens, every version a client held still leads,
/// by `changes?since`, to what a `SELECT` returns.
final class SourcedFeedOperationsTests: SourcedTestCase {
    func testShapesAreReadAgainOnSIGHUPAndAFileThatCannotBeServedKeepsThoseInForce() throws {
        let server = try startServer(["--source-database", cluster.uri, "--shapes", shapesURL.path, "--log-level", "notice"])
        let client = server.client
        let bob = try read(client, "todos-bob", expected: try todos("bob"))
        let catalogVersion = int(assertJSON(try client.get("/feeds/catalog"))["version"])
        // todos-{owner} loses its title, catalog stays as it was, notes-{owner} is new (on a
        // table the publication does not hold yet).
        try cluster.query("CREATE TABLE notes (id int PRIMARY KEY, owner text NOT NULL, note text NOT NULL); INSERT INTO notes VALUES (1, 'ann', 'hi')")
        try Data("""
            {"shapes": [
              {"feed": "todos-{owner}", "table": "todos", "columns": ["id", "rank"], "where": {"owner": "{owner}"}},
              {"feed": "catalog", "table": "products", "columns": ["id", "name", "price"], "orderBy": ["name"], "sectionBy": "company"},
              {"feed": "notes-{owner}", "table": "notes", "columns": ["id", "note"], "where": {"owner": "{owner}"}}
            ]}
            """.utf8).write(to: shapesURL)
        kill(server.pid, SIGHUP)
        XCTAssertTrue(eventually(timeout: 15) { server.log.contains("shapes read again") }, server.log)
        var notes = try read(client, "notes-ann", expected: [["id": 1, "note": "hi"]])
        try cluster.query("INSERT INTO notes VALUES (2, 'ann', 'there')")
        try expectVersion(client, "notes-ann", &notes, expected: [["id": 1, "note": "hi"], ["id": 2, "note": "there"]])
        // The changed shape's feed is a new series; the kept one goes on.
        assertProblem(try client.get("/feeds/todos-bob/changes?since=\(bob.version)"), 410, "version_gone")
        XCTAssertEqual(assertJSON(try client.get("/feeds/todos-bob"))["data"].map(canonicalJSON), canonicalJSON([["id": 3, "rank": 5]]))
        XCTAssertEqual(int(assertJSON(try client.get("/feeds/catalog"))["version"]), catalogVersion)
        try cluster.query("UPDATE products SET name = 'anvils' WHERE id = 1")
        XCTAssertEqual(int(assertJSON(try client.get("/feeds/catalog/changes?since=\(catalogVersion ?? 0)&wait=10", timeout: 15))["from"]), catalogVersion)
        // byrank-{rank} went: its ids are ordinary feeds again.
        XCTAssertEqual(try client.put("/feeds/byrank-5", "[1]").status, 200)

        // A shape that cannot be served is refused, and the shapes in force stay.
        try Data(#"{"shapes": [{"feed": "todos-{owner}", "table": "todos", "columns": ["id", "colour"], "where": {"owner": "{owner}"}}]}"#.utf8).write(to: shapesURL)
        kill(server.pid, SIGHUP)
        XCTAssertTrue(eventually(timeout: 15) { server.log.contains("shapes not read again") }, server.log)
        XCTAssertTrue(server.log.contains("no column \"colour\""), server.log)
        assertProblem(try client.put("/feeds/notes-ann", "[]"), 409, "feed_is_sourced")
        try cluster.query("INSERT INTO notes VALUES (3, 'ann', 'again')")
        try expectVersion(client, "notes-ann", &notes, expected: [["id": 1, "note": "hi"], ["id": 2, "note": "there"], ["id": 3, "note": "again"]])
    }

    func testAKillDashNineDuringCommitsLosesAndDoublesNothingWithSQLite() throws {
        let arguments = [
            "--source-database", cluster.uri, "--shapes", shapesURL.path,
            "--store", "sqlite:" + cluster.directory.appendingPathComponent("feeds.sqlite").path, "--max-versions", "1000",
        ]
        let server = try startServer(arguments)
        var held = ["ann": [try read(server.client, "todos-ann", expected: try todos("ann"))], "bob": [try read(server.client, "todos-bob", expected: try todos("bob"))]]
        // 500 commits, each an insert for ann or bob or an update moving a row, a few ms apart.
        let commits = cluster.startQuery("""
            DO $$ BEGIN FOR i IN 1..500 LOOP
              IF i % 3 = 0 THEN UPDATE todos SET rank = rank + 1 WHERE id = 100 + i - 1;
              ELSE INSERT INTO todos (id, owner, title, rank) VALUES (100 + i, CASE WHEN i % 2 = 0 THEN 'ann' ELSE 'bob' END, 't' || i, i % 7); END IF;
              COMMIT; PERFORM pg_sleep(0.004);
            END LOOP; END $$
            """)
        // A client follows each feed, holding what each version it is told about shows.
        for round in 0..<8 {
            let owner = round % 2 == 0 ? "ann" : "bob"
            let last = held[owner]!.last!
            let answer = assertJSON(try server.client.get("/feeds/todos-\(owner)/changes?since=\(last.version)&wait=10", timeout: 15))
            let rows = try decodeListBatch(answer).apply(to: last.rows, values: try decodeListValues(answer))
            held[owner]!.append(Held(version: try XCTUnwrap(int(answer["to"])), rows: rows))
        }
        kill(server.pid, SIGKILL)
        XCTAssertNotNil(server.waitForExit(timeout: 10))
        XCTAssertEqual(commits.wait(timeout: .now() + 60), .success, "the commits did not end")
        XCTAssertEqual(try cluster.query("SELECT count(*) FROM todos WHERE id > 100").trimmingCharacters(in: .whitespacesAndNewlines), "334")

        let restarted = try startServer(arguments)
        for (owner, versions) in held {
            // One series: every version held is still answered, and leads to the table's rows.
            for version in versions {
                let answer = assertJSON(try restarted.client.get("/feeds/todos-\(owner)/changes?since=\(version.version)"))
                XCTAssertEqual(int(answer["from"]), version.version, "\(owner): \(answer)")
                let rows = try decodeListBatch(answer).apply(to: version.rows, values: try decodeListValues(answer))
                XCTAssertEqual(rows, listElements(try todos(owner)), "\(owner) since \(version.version)")
            }
            let versions = versions.map(\.version)
            XCTAssertEqual(versions, versions.sorted(), "\(owner): versions in order")
            XCTAssertEqual(Set(versions).count, versions.count, "\(owner): no version told twice")
        }
        // Commits after the restart: one version each, as before.
        var ann = try read(restarted.client, "todos-ann", expected: try todos("ann"))
        try cluster.query("UPDATE todos SET title = 'after' WHERE id = 1")
        try expectVersion(restarted.client, "todos-ann", &ann, expected: try todos("ann"))
    }

    func testTheDatabaseStoppedForThreeSecondsIsNotReadyAndMissesNothing() throws {
        let client = try startSourcedServer()
        XCTAssertTrue(eventually(timeout: 10) { (try? client.get("/readyz").status) == 200 }, "never ready")
        var ann = try read(client, "todos-ann", expected: try todos("ann"))
        // A commit, then the database stopped at once: the stream may not have sent it yet.
        try cluster.query("INSERT INTO todos (id, owner, title, rank) VALUES (10, 'ann', 'before', 3)")
        let before = try todos("ann")
        try cluster.stop()
        XCTAssertTrue(eventually(timeout: 10) { (try? client.get("/readyz").status) == 503 }, "ready with the database stopped")
        assertProblem(try client.get("/readyz"), 503, "source_unavailable")
        // What is held still answers; a feed not made cannot be.
        XCTAssertEqual(try client.get("/feeds/todos-ann").status, 200)
        assertProblem(try client.get("/feeds/todos-bob"), 503, "source_unavailable")
        Thread.sleep(forTimeInterval: 3)
        try cluster.start()
        XCTAssertTrue(eventually(timeout: 20) { (try? client.get("/readyz").status) == 200 }, "not ready again")
        try expectVersion(client, "todos-ann", &ann, expected: before)
        try cluster.query("INSERT INTO todos (id, owner, title, rank) VALUES (11, 'ann', 'after', 4)")
        try expectVersion(client, "todos-ann", &ann, expected: try todos("ann"))
        _ = try read(client, "todos-bob", expected: try todos("bob"))
    }

    func testAnInvalidatedSlotIsMadeAgainAndEveryFeedStartsANewSeries() throws {
        let server = try startServer(["--source-database", cluster.uri, "--shapes", shapesURL.path])
        let ann = try read(server.client, "todos-ann", expected: try todos("ann"))
        // The server frozen (it acknowledges nothing), the database allowed to keep 1 MB of
        // WAL for a slot writes past it and checkpoints: the slot is lost.
        try cluster.query("ALTER SYSTEM SET max_slot_wal_keep_size = '1MB'")
        try cluster.query("SELECT pg_reload_conf()")
        kill(server.pid, SIGSTOP)
        try cluster.query("INSERT INTO todos (id, owner, title) VALUES (20, 'ann', 'while frozen')")
        try cluster.query("CREATE TABLE filler (x text)")
        for _ in 0..<4 {
            try cluster.query("INSERT INTO filler SELECT repeat('x', 1000) FROM generate_series(1, 20000)")
            try cluster.query("SELECT pg_switch_wal()")
        }
        try cluster.query("CHECKPOINT")
        XCTAssertEqual(try cluster.query("SELECT wal_status FROM pg_replication_slots").trimmingCharacters(in: .whitespacesAndNewlines), "lost")
        kill(server.pid, SIGCONT)
        XCTAssertTrue(eventually(timeout: 20) { server.log.contains("the replication slot was invalidated") }, server.log)
        XCTAssertTrue(eventually(timeout: 20) { (try? server.client.get("/readyz").status) == 200 }, "not ready again")
        assertProblem(try server.client.get("/feeds/todos-ann/changes?since=\(ann.version)"), 410, "version_gone")
        var again = try read(server.client, "todos-ann", expected: try todos("ann"))
        try cluster.query("UPDATE todos SET title = 'thawed' WHERE id = 20")
        try expectVersion(server.client, "todos-ann", &again, expected: try todos("ann"))
    }
}
