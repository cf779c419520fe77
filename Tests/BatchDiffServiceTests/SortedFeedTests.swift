import Foundation
import XCTest

/// Feeds created sorted on the memory store (docs/feeds.md §14); the SQLite and PostgreSQL
/// stores run the same check across a restart.
final class SortedFeedTests: ServerTestCase {
    func testASortedFeedKeepsItsOrder() throws {
        let client = try startServer().client
        try assertSortedFeedKeepsItsOrder(client, reopened: { client }, feed: "leaderboard")
    }

    /// Sections by their headers' members, rows within each by theirs.
    func testASortedSectionedFeedKeepsBothOrders() throws {
        let client = try startServer().client
        let written = #"{"sections":[{"id":"b","rank":2,"items":[{"id":1,"s":5},{"id":2,"s":9}]},{"id":"a","rank":1,"items":[]}]}"#
        let sorted = #"{"sections":[{"id":"a","rank":1,"items":[]},{"id":"b","rank":2,"items":[{"id":2,"s":9},{"id":1,"s":5}]}]}"#
        assertVersion(try client.put("/feeds/teams?orderBy=-s&sectionOrderBy=rank", written))
        XCTAssertEqual(assertJSON(try client.get("/feeds/teams"))["data"].map(canonicalJSON), canonicalJSON(parseJSON(sorted)))
    }

    /// A key that does not sort is 422 `invalid_sort_key` naming the row (the op, in a
    /// PATCH), an order that does not read 400 `invalid_query`, sections ordered in a list 422
    /// `invalid_shape`, and so is a PATCH op that places a row of a sorted feed; nothing is
    /// stored by any of them.
    func testWritesThatDoNotSortAreRefused() throws {
        let client = try startServer().client
        let refused = assertProblem(try client.put("/feeds/s?orderBy=score", #"[{"id":1,"score":2},{"id":2,"score":{"a":1}}]"#), 422, "invalid_sort_key")
        XCTAssertTrue((refused["detail"] as? String ?? "").hasPrefix(#"body[1]: its "score" is an object"#), "\(refused)")
        for bad in ["", "a,,b", "a,a", "-"] {
            assertProblem(try client.put("/feeds/s?orderBy=\(bad)", "[]"), 400, "invalid_query")
        }
        assertProblem(try client.put("/feeds/s?sectionOrderBy=rank", "[1,2]"), 422, "invalid_shape")
        XCTAssertEqual(try client.get("/feeds/s").status, 404, "nothing was stored")
        let version = assertVersion(try client.put("/feeds/s?orderBy=score", #"[{"id":1,"score":2},{"id":2,"score":3}]"#))
        let patch = { (ops: String) in try client.request("PATCH", "/feeds/s", body: Array(#"{"ops":[{"op":"remove","id":1},\#(ops)]}"#.utf8)) }
        for placing in [#"{"op":"upsert","item":{"id":3,"score":1},"at":"start"}"#, #"{"op":"move","id":2,"after":1}"#] {
            let problem = assertProblem(try patch(placing), 422, "invalid_shape")
            XCTAssertEqual(problem["op"] as? Int, 1)
            XCTAssertTrue((problem["detail"] as? String ?? "").contains("sorted (orderBy=score)"), "\(problem)")
        }
        let key = assertProblem(try patch(#"{"op":"upsert","item":{"id":3,"score":[1]}}"#), 422, "invalid_sort_key")
        XCTAssertEqual(key["op"] as? Int, 1)
        XCTAssertTrue((key["detail"] as? String ?? "").contains(#"row {"id":3,"score":[1]}: its "score" is an array"#), "\(key)")
        let latest = assertJSON(try client.get("/feeds/s"))
        XCTAssertEqual(latest["version"] as? Int, version, "nothing was stored")
    }
}
