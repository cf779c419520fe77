import Foundation
import XCTest

/// `GET /feeds/{id}?offset=&limit=` and `?after=&limit=` (docs/feeds.md §4.1): pages of the
/// latest collection, a cursor that survives inserts above it, and every bad query refused.
/// (Pages after random patches, against a model: PatchHistory.)
final class FeedPageTests: ServerTestCase {
    private func ids(_ page: [String: Any]) -> [Int] {
        (page["data"] as? [[String: Any]] ?? []).compactMap { int($0["id"]) }
    }

    func testPagesByOffsetAndByCursorCoverTheFeedOnce() throws {
        let client = try startServer().client
        let rows = (0..<250).map { ["id": $0, "title": "row \($0)"] as [String: Any] }
        let version = assertVersion(try client.put("/feeds/p", jsonText(rows)))
        let whole = try client.get("/feeds/p")

        let first = try client.get("/feeds/p?limit=100")
        XCTAssertEqual(first.header("ETag"), whole.header("ETag"), "a page's ETag is the whole feed's")
        var page = assertJSON(first)
        XCTAssertEqual(page["feed"] as? String, "p")
        XCTAssertEqual(int(page["version"]), version)
        XCTAssertEqual(int(page["total"]), 250)
        XCTAssertEqual(int(page["offset"]), 0)
        XCTAssertEqual(ids(page), Array(0..<100))
        XCTAssertEqual(int(page["next"]), 99)
        XCTAssertEqual(canonicalJSON(page["data"]!), canonicalJSON(Array(rows[0..<100])), "rows as written")

        // By cursor, the pages cover every row once.
        var seen = ids(page)
        while let next = int(page["next"]) {
            page = assertJSON(try client.get("/feeds/p?after=\(next)&limit=70"))
            XCTAssertEqual(int(page["offset"]), next + 1)
            seen += ids(page)
        }
        XCTAssertEqual(seen, Array(0..<250))

        // Without limit, 100 rows; past the end, no rows and no next.
        XCTAssertEqual(ids(assertJSON(try client.get("/feeds/p?offset=10"))), Array(10..<110))
        page = assertJSON(try client.get("/feeds/p?offset=240&limit=100"))
        XCTAssertEqual(ids(page), Array(240..<250))
        XCTAssertNil(page["next"])
        for offset in [250, 1000, Int.max] {
            page = assertJSON(try client.get("/feeds/p?offset=\(offset)"))
            XCTAssertEqual((page["data"] as? [Any])?.count, 0, "offset \(offset)")
            XCTAssertNil(page["next"])
            XCTAssertEqual(int(page["total"]), 250)
        }
        // A conditional GET of a page: 304 while the feed has not changed.
        let conditional = try client.get("/feeds/p?offset=5&limit=5", headers: ["If-None-Match": first.header("ETag")!])
        XCTAssertEqual(conditional.status, 304)
        XCTAssertEqual(try client.request("HEAD", "/feeds/p?offset=5&limit=5").status, 200)
    }

    func testACursorSurvivesInsertsAboveAndIsGoneWithItsRow() throws {
        let client = try startServer().client
        assertVersion(try client.put("/feeds/c", jsonText((0..<20).map { ["id": $0] })))
        let page = assertJSON(try client.get("/feeds/c?limit=10"))
        XCTAssertEqual(int(page["next"]), 9)
        // Five rows inserted at the top, by a patch and then by a whole write.
        let patch = jsonText(["ops": (100..<105).map { ["op": "upsert", "item": ["id": $0], "at": "start"] as [String: Any] }])
        XCTAssertEqual(try client.request("PATCH", "/feeds/c", body: Array(patch.utf8)).status, 200)
        var next = assertJSON(try client.get("/feeds/c?after=9&limit=10"))
        XCTAssertEqual(ids(next), Array(10..<20), "the rows after row 9, wherever it now stands")
        XCTAssertEqual(int(next["offset"]), 15)
        assertVersion(try client.put("/feeds/c", jsonText(((200..<203).map { ["id": $0] }) + (100..<105).map { ["id": $0] } + (0..<20).map { ["id": $0] })))
        next = assertJSON(try client.get("/feeds/c?after=9&limit=10"))
        XCTAssertEqual(ids(next), Array(10..<20))
        XCTAssertEqual(int(next["offset"]), 18)
        // Row 9 removed: its cursor is gone.
        let remove = #"{"ops": [{"op": "remove", "id": 9}]}"#
        XCTAssertEqual(try client.request("PATCH", "/feeds/c", body: Array(remove.utf8)).status, 200)
        let gone = assertProblem(try client.get("/feeds/c?after=9"), 410, "cursor_gone")
        XCTAssertTrue((gone["detail"] as? String)?.contains("9") == true, "\(gone)")
    }

    /// `after` is read as a number when it parses as one and the feed has such an
    /// identity, else as a string; a cursor on an identity several rows share is refused.
    func testCursorsAreNumbersOrStringsAndMustBeUnique() throws {
        let client = try startServer().client
        assertVersion(try client.put("/feeds/mixed", #"[{"id": "a"}, {"id": 7}, {"id": "7"}, {"id": "x y"}, {"id": 7.5}]"#))
        func after(_ cursor: String) throws -> [Any] {
            let page = assertJSON(try client.get("/feeds/mixed?after=\(cursor)&limit=1"))
            return (page["data"] as? [[String: Any]] ?? []).compactMap { $0["id"] }
        }
        XCTAssertEqual(try after("7").first as? String, "7", "after the number 7: the string \"7\"")
        XCTAssertEqual(try after("a").first as? Int, 7)
        XCTAssertEqual(try after("x%20y").first as? Double, 7.5)
        assertVersion(try client.put("/feeds/strings", #"[{"id": "7"}, {"id": "8"}]"#))
        XCTAssertEqual(ids(assertJSON(try client.get("/feeds/strings?after=7"))), [], "8 is a string")
        XCTAssertEqual((assertJSON(try client.get("/feeds/strings?after=7"))["data"] as? [[String: Any]])?.first?["id"] as? String, "8")
        // Rows without an identity member: the row is its own cursor.
        assertVersion(try client.put("/feeds/plain", #"["a", "b", "c"]"#))
        let plain = assertJSON(try client.get("/feeds/plain?limit=2"))
        XCTAssertEqual(plain["next"] as? String, "b")
        XCTAssertEqual(assertJSON(try client.get("/feeds/plain?after=b"))["data"] as? [String], ["c"])
        // A repeated identity is no cursor.
        assertVersion(try client.put("/feeds/repeats", #"[{"id": 1}, {"id": 1, "v": 2}, {"id": 2}]"#))
        assertProblem(try client.get("/feeds/repeats?after=1"), 422, "duplicate_identity")
    }

    func testSectionedPagesHoldWholeSections() throws {
        let client = try startServer().client
        let sections = (0..<5).map { section in
            ["id": "s\(section)", "title": "Section \(section)", "items": (0..<section).map { ["id": section * 10 + $0] }] as [String: Any]
        }
        let version = assertVersion(try client.put("/feeds/s", jsonText(["sections": sections])))
        var page = assertJSON(try client.get("/feeds/s?offset=1&limit=2"))
        XCTAssertEqual(int(page["version"]), version)
        XCTAssertEqual(int(page["total"]), 5, "sections")
        XCTAssertEqual(canonicalJSON(page["data"]!), canonicalJSON(["sections": Array(sections[1..<3])]))
        XCTAssertEqual(page["next"] as? String, "s2")
        page = assertJSON(try client.get("/feeds/s?after=s2&limit=10"))
        XCTAssertEqual(canonicalJSON(page["data"]!), canonicalJSON(["sections": Array(sections[3...])]))
        XCTAssertNil(page["next"])
        XCTAssertEqual(int(page["offset"]), 3)
    }

    func testBadPageQueriesAreRefused() throws {
        let client = try startServer().client
        assertVersion(try client.put("/feeds/q", "[1, 2, 3]"))
        for query in ["limit=0", "limit=10001", "limit=x", "offset=-1", "offset=1.5", "offset=", "after=", "offset=0&after=1"] {
            assertProblem(try client.get("/feeds/q?\(query)"), 400, "invalid_query")
        }
        assertProblem(try client.get("/feeds/q?after=" + String(repeating: "x", count: 1025)), 400, "invalid_query")
        assertProblem(try client.get("/feeds/q?after=9"), 410, "cursor_gone")
        XCTAssertEqual(try client.get("/feeds/none?limit=5").status, 404)
        // What windows do not answer yet is refused, never answered for the whole collection
        // (which a client would apply to its window).
        for query in ["limit=0", "offset=-2", "after=1&offset=0", "after=&limit=2"] {
            assertProblem(try client.get("/feeds/q/changes?since=0&\(query)"), 400, "invalid_query")
        }
        // limit 10,000 is allowed.
        XCTAssertEqual(assertJSON(try client.get("/feeds/q?limit=10000"))["data"] as? [Int], [1, 2, 3])
    }

    /// A durable store pages the same way (the latest version read once, then its rows kept).
    func testPagesFromASQLiteStore() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pages-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let client = try startServer(["--store", "sqlite:" + directory.appendingPathComponent("feeds.db").path]).client
        assertVersion(try client.put("/feeds/d", jsonText((0..<30).map { ["id": $0] })))
        let patch = #"{"ops": [{"op": "move", "id": 29, "at": "start"}]}"#
        XCTAssertEqual(try client.request("PATCH", "/feeds/d", body: Array(patch.utf8)).status, 200)
        XCTAssertEqual(ids(assertJSON(try client.get("/feeds/d?limit=3"))), [29, 0, 1])
        XCTAssertEqual(ids(assertJSON(try client.get("/feeds/d?after=27"))), [28])
    }
}
