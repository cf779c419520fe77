import BatchDiff
import Foundation
import TestSupport
import XCTest

/// Feeds that follow a real PostgreSQL through logical replication (docs/sources.md): each
/// kind of change, committed with `psql`, makes exactly one version whose batch, applied to
/// what the client held, gives the rows a `SELECT` of the same shape returns, and breaks
/// no batch rule.
final class SourcedFeedTests: SourcedTestCase {
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
