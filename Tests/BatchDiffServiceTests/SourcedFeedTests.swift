import BatchDiff
import Foundation
import TestSupport
import XCTest

/// Feeds that follow a real PostgreSQL through logical replication (docs/sources.md): each
/// kind of change, committed with `psql`, makes exactly one version whose batch, applied to
/// what the client held, gives the rows a `SELECT` of the same shape returns, and breaks
/// no batch rule.
final class SourcedFeedTests: ServerTestCase {
    private var cluster: PostgresCluster!
    private var shapesURL: URL!

    private static let schema = """
        CREATE TABLE todos (id int PRIMARY KEY, owner text NOT NULL, title text NOT NULL, rank int NOT NULL DEFAULT 0,
                            done boolean NOT NULL DEFAULT false, body text, secret text);
        ALTER TABLE todos ALTER COLUMN body SET STORAGE EXTERNAL;
        CREATE TABLE products (id int PRIMARY KEY, company text NOT NULL, name text NOT NULL, price numeric NOT NULL);
        INSERT INTO todos (id, owner, title, rank) VALUES (1, 'ann', 'milk', 2), (2, 'ann', 'eggs', 1), (3, 'bob', 'tea', 5);
        INSERT INTO products VALUES (1, 'acme', 'anvil', 9.5), (2, 'acme', 'rocket', 120), (3, 'zeta', 'zip', 1);
        """

    private static let shapes = """
        {"shapes": [
          {"feed": "todos-{owner}", "table": "todos", "columns": ["id", "title", "rank", "done", "body"],
           "where": {"owner": "{owner}"}, "orderBy": ["rank", "id"]},
          {"feed": "byrank-{rank}", "table": "public.todos", "columns": ["id", "title"], "where": {"rank": "{rank}", "done": false}},
          {"feed": "catalog", "table": "products", "columns": ["id", "name", "price"], "orderBy": ["name"], "sectionBy": "company"}
        ]}
        """

    override func setUpWithError() throws {
        cluster = try PostgresCluster()
        try cluster.query(Self.schema)
        shapesURL = cluster.directory.appendingPathComponent("shapes.json")
        try Data(Self.shapes.utf8).write(to: shapesURL)
    }

    override func tearDown() {
        super.tearDown()
        cluster = nil
    }

    private func startSourcedServer(_ arguments: [String] = []) throws -> HTTPClient {
        try startServer(["--source-database", cluster.uri, "--shapes", shapesURL.path] + arguments).client
    }

    /// What a client of a list feed holds: its version and rows.
    private struct Held {
        var version: Int
        var rows: [JSONElement]
    }

    /// The `todos` of `owner` as the shape selects them, in its order.
    private func todos(_ owner: String) throws -> Any {
        parseJSON(try cluster.query("""
            SELECT coalesce(json_agg(json_build_object('id', id, 'title', title, 'rank', rank, 'done', done, 'body', body) ORDER BY rank, id), '[]')
            FROM todos WHERE owner = '\(owner)'
            """))
    }

    /// The products in sections by company (a price of more than 15 digits as a string).
    private func catalog() throws -> Any {
        parseJSON(try cluster.query("""
            SELECT json_build_object('sections', coalesce(json_agg(json_build_object('company', company, 'items', items) ORDER BY company COLLATE "C"), '[]'))
            FROM (SELECT company, json_agg(json_build_object('id', id, 'name', name, 'price',
                    CASE WHEN length(regexp_replace(price::text, '[^0-9]', '', 'g')) > 15 THEN to_json(price::text) ELSE to_json(price) END) ORDER BY name COLLATE "C", id) AS items
                  FROM products GROUP BY company) AS sections
            """))
    }

    /// Reads feed `name` (making it) and checks it holds `expected`.
    private func read(_ client: HTTPClient, _ name: String, expected: Any, file: StaticString = #filePath, line: UInt = #line) throws -> Held {
        let feed = assertJSON(try client.get("/feeds/\(name)"), file: file, line: line)
        XCTAssertEqual(feed["data"].map(canonicalJSON), canonicalJSON(expected), file: file, line: line)
        return Held(version: int(feed["version"]) ?? 0, rows: listElements(feed["data"] ?? []))
    }

    /// Waits for the next version of list feed `name` and checks it: exactly one version
    /// after `held`, its batch applied to `held` gives `expected`, keeping every rule.
    private func expectVersion(_ client: HTTPClient, _ name: String, _ held: inout Held, expected: Any, file: StaticString = #filePath, line: UInt = #line) throws {
        let answer = assertJSON(try client.get("/feeds/\(name)/changes?since=\(held.version)&wait=10", timeout: 15), file: file, line: line)
        XCTAssertEqual(int(answer["to"]), held.version + 1, "one version per commit: \(answer)", file: file, line: line)
        let new = listElements(expected)
        let batch = try decodeListBatch(answer)
        XCTAssertEqual(try batch.apply(to: held.rows, values: try decodeListValues(answer)), new, "\(answer)", file: file, line: line)
        let (old, wrapped) = ([Section(header: 0, items: held.rows)], [Section(header: 0, items: new)])
        XCTAssertEqual(brokenRules(batch.sectioned, old: old, new: wrapped, identity: \.identity), [], file: file, line: line)
        held = Held(version: int(answer["to"]) ?? held.version, rows: new)
    }

    func testEveryKindOfChangeMakesOneVersionThatAppliesToTheQuery() throws {
        let client = try startSourcedServer()
        var ann = try read(client, "todos-ann", expected: try todos("ann"))
        var bob = try read(client, "todos-bob", expected: try todos("bob"))
        XCTAssertEqual(canonicalJSON(try todos("ann")).contains("eggs"), true)

        // An insert.
        try cluster.query("INSERT INTO todos (id, owner, title, rank) VALUES (4, 'ann', 'bread', 3)")
        try expectVersion(client, "todos-ann", &ann, expected: try todos("ann"))
        // An update in place, and one that moves the row (its rank, a key of the order).
        try cluster.query("UPDATE todos SET title = 'oat milk' WHERE id = 1")
        try expectVersion(client, "todos-ann", &ann, expected: try todos("ann"))
        try cluster.query("UPDATE todos SET rank = 0 WHERE id = 4")
        try expectVersion(client, "todos-ann", &ann, expected: try todos("ann"))
        // A row crossing feeds: one version of each.
        try cluster.query("UPDATE todos SET owner = 'bob' WHERE id = 2")
        try expectVersion(client, "todos-ann", &ann, expected: try todos("ann"))
        try expectVersion(client, "todos-bob", &bob, expected: try todos("bob"))
        // A delete.
        try cluster.query("DELETE FROM todos WHERE id = 3")
        try expectVersion(client, "todos-bob", &bob, expected: try todos("bob"))
        // A transaction of many rows: one version.
        try cluster.query("""
            BEGIN; INSERT INTO todos (id, owner, title, rank) VALUES (5, 'ann', 'jam', 1), (6, 'ann', 'tea', 9);
            UPDATE todos SET done = true WHERE id = 1; DELETE FROM todos WHERE id = 4; UPDATE todos SET title = 'x' WHERE id = 5; COMMIT;
            """)
        try expectVersion(client, "todos-ann", &ann, expected: try todos("ann"))
        // A change only to a column the shape leaves out makes no version: the next commit's
        // version (of another feed) is told after it, and the first feed has none.
        try cluster.query("UPDATE todos SET secret = 's' WHERE owner = 'ann'")
        try cluster.query("INSERT INTO todos (id, owner, title) VALUES (7, 'bob', 'cake')")
        try expectVersion(client, "todos-bob", &bob, expected: try todos("bob"))
        XCTAssertEqual(int(assertJSON(try client.get("/feeds/todos-ann"))["version"]), ann.version)
        // TRUNCATE empties every feed of the table.
        try cluster.query("TRUNCATE todos")
        try expectVersion(client, "todos-ann", &ann, expected: [Any]())
        try expectVersion(client, "todos-bob", &bob, expected: [Any]())
    }

    func testUnchangedToastedValuesComeFromTheFeedOrTheTable() throws {
        let client = try startSourcedServer()
        // Bodies stored out of line, uncompressed (STORAGE EXTERNAL): an update that leaves
        // them is sent without them.
        try cluster.query("""
            INSERT INTO todos (id, owner, title, body) VALUES (10, 'ann', 'long', repeat('ann''s body ', 300)), (11, 'zed', 'far', repeat('zed''s body ', 300))
            """)
        var ann = try read(client, "todos-ann", expected: try todos("ann"))
        try cluster.query("UPDATE todos SET title = 'longer' WHERE id = 10")
        try expectVersion(client, "todos-ann", &ann, expected: try todos("ann"))
        // A row entering a feed with a value the stream does not repeat: read from the table.
        try cluster.query("UPDATE todos SET owner = 'ann' WHERE id = 11")
        try expectVersion(client, "todos-ann", &ann, expected: try todos("ann"))
        XCTAssertTrue(ann.rows.contains { $0.content.contains("zed's body zed's body") })
    }

    func testSectionsAreMadeAndEmptiedByTheirColumn() throws {
        let client = try startSourcedServer()
        let first = assertJSON(try client.get("/feeds/catalog"))
        XCTAssertEqual(first["data"].map(canonicalJSON), canonicalJSON(try catalog()))
        var held = (version: int(first["version"]) ?? 0, sections: sectionElements(first["data"] ?? [:]))
        for sql in [
            "INSERT INTO products VALUES (4, 'mega', 'mop', 3.25)",  // a new section
            "UPDATE products SET company = 'zeta', name = 'bolt' WHERE id = 1",  // a row between sections
            "UPDATE products SET price = 99999999999999999.5 WHERE id = 2",  // a numeric past 15 digits: a string
            "DELETE FROM products WHERE id = 4",  // the last row of a section: the section goes
            "BEGIN; UPDATE products SET company = 'beta' WHERE company = 'zeta'; INSERT INTO products VALUES (5, 'acme', 'axe', 7); COMMIT",
        ] {
            try cluster.query(sql)
            let answer = assertJSON(try client.get("/feeds/catalog/changes?since=\(held.version)&wait=10", timeout: 15))
            XCTAssertEqual(int(answer["to"]), held.version + 1, sql)
            let new = sectionElements(try catalog())
            let batch = try decodeSectionedBatch(answer)
            XCTAssertEqual(try batch.apply(to: held.sections, values: try decodeSectionedValues(answer)), new, "\(sql): \(answer)")
            XCTAssertEqual(brokenRules(batch, old: held.sections, new: new, identity: \.identity), [], sql)
            held = (int(answer["to"]) ?? 0, new)
        }
        XCTAssertTrue(try client.get("/feeds/catalog").text.contains(#""price":"99999999999999999.5""#))
    }

    func testWritesToSourcedIdsAreRefusedAndIdsThatDoNotCastAreNotFound() throws {
        let client = try startSourcedServer()
        for (method, body) in [("PUT", "[]"), ("PATCH", #"{"ops":[]}"#), ("DELETE", "")] {
            // Made or not: todos-ann is not read yet, todos-bob is.
            _ = try client.get("/feeds/todos-bob")
            for id in ["todos-ann", "todos-bob"] {
                assertProblem(try client.request(method, "/feeds/\(id)", body: body.isEmpty ? nil : Array(body.utf8)), 409, "feed_is_sourced")
            }
        }
        XCTAssertEqual(assertJSON(try client.get("/feeds/byrank-5"))["data"].map(canonicalJSON), canonicalJSON([["id": 3, "title": "tea"]]))
        assertProblem(try client.get("/feeds/byrank-x"), 404, "feed_not_found")
        assertProblem(try client.get("/feeds/byrank-05"), 404, "feed_not_found")
        // An id no template matches is an ordinary feed.
        XCTAssertEqual(try client.put("/feeds/mine", "[1]").status, 200)
    }

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

    func testAShapeThatCannotBeServedStopsTheServerNamingIt() throws {
        for (shape, named) in [
            (#"{"feed": "a-{x}", "table": "nothing", "where": {"x": "{x}"}}"#, "no table public.nothing"),
            (#"{"feed": "a-{x}", "table": "todos", "columns": ["id", "colour"], "where": {"owner": "{x}"}}"#, "no column \"colour\""),
            (#"{"feed": "a-{x}", "table": "todos", "where": {"owner": "{y}"}}"#, "placeholder {x}"),
        ] {
            try Data(#"{"shapes": [\#(shape)]}"#.utf8).write(to: shapesURL)
            let run = try CommandRun(["serve", "--port", "0", "--source-database", cluster.uri, "--shapes", shapesURL.path], timeout: 30)
            XCTAssertNotEqual(run.status, 0, run.output)
            XCTAssertTrue(run.error.contains(named), run.error)
            XCTAssertFalse(run.output.contains("listening"), run.output)
        }
    }
}
