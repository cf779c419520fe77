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

    /// A key that does not sort is 422 `invalid_sort_key` naming the row, an order that does
    /// not read 400 `invalid_query`, sections ordered in a list 422 `invalid_shape`; a PATCH
    /// of a sorted feed is refused (422 `invalid_shape`) until upserts are placed by key;
    /// nothing is stored by any of them.
    func testWritesThatDoNotSortAreRefused() throws {
        let client = try startServer().client
        let refused = assertProblem(try client.put("/feeds/s?orderBy=score", #"[{"id":1,"score":2},{"id":2,"score":{"a":1}}]"#), 422, "invalid_sort_key")
        XCTAssertTrue((refused["detail"] as? String ?? "").hasPrefix(#"body[1]: its "score" is an object"#), "\(refused)")
        for bad in ["", "a,,b", "a,a", "-"] {
            assertProblem(try client.put("/feeds/s?orderBy=\(bad)", "[]"), 400, "invalid_query")
        }
        assertProblem(try client.put("/feeds/s?sectionOrderBy=rank", "[1,2]"), 422, "invalid_shape")
        XCTAssertEqual(try client.get("/feeds/s").status, 404, "nothing was stored")
        assertVersion(try client.put("/feeds/s?orderBy=score", #"[{"id":1,"score":2}]"#))
        let patch = assertProblem(try client.request("PATCH", "/feeds/s", body: Array(#"{"ops":[{"op":"remove","id":1}]}"#.utf8)), 422, "invalid_shape")
        XCTAssertTrue((patch["detail"] as? String ?? "").contains("sorted"), "\(patch)")
    }
}
