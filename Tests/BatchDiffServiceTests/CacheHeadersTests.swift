import Foundation
import XCTest

/// What `changes` answers say a cache may keep (docs/feeds.md §5.4): a range of versions
/// for good, the same bytes every time; a plain question or a long poll that holds a batch
/// for a second; an empty long poll, a problem document and a stream not at all; answers to
/// requests that carried a token only for the client, unless every feed is public.
final class CacheHeadersTests: ServerTestCase {
    private func versions(_ client: HTTPClient, _ feed: String, _ texts: [String]) throws -> [Int] {
        try texts.map { assertVersion(try client.put("/feeds/\(feed)", $0)) }
    }

    func testARangeIsImmutableAndTheSameBytesEveryTime() throws {
        let client = try startServer(["--max-versions", "3"]).client
        let v = try versions(client, "r", ["[1, 2]", "[2, 3]", "[3, 4, 5]"])
        let range = try client.get("/feeds/r/changes?since=\(v[0])&to=\(v[1])")
        XCTAssertEqual(range.status, 200)
        XCTAssertEqual(range.header("Cache-Control"), "public, max-age=31536000, immutable")
        XCTAssertEqual(range.header("ETag"), "\"\(v[1])\"")
        XCTAssertEqual(range.header("Vary"), "Accept, Accept-Encoding")
        let answer = assertJSON(range)
        XCTAssertEqual(int(answer["from"]), v[0])
        XCTAssertEqual(int(answer["to"]), v[1], "the range's end, not the latest")
        XCTAssertEqual(canonicalJSON(answer["values"] ?? [:]), canonicalJSON(["rows": ["inserted": [3], "reloaded": [Any]()]]))
        // The same bytes again, after another version and from another connection.
        assertVersion(try client.put("/feeds/r", "[5]"), v[2] + 1)
        XCTAssertEqual(try client.get("/feeds/r/changes?since=\(v[0] + 1)&to=\(v[1])").status, 200, "a range of one version is empty")
        XCTAssertEqual(try client.get("/feeds/r/changes?since=\(v[1])&to=\(v[2])").text, try client.get("/feeds/r/changes?since=\(v[1])&to=\(v[2])").text)
        // gzip: its own strong tag, naming the same version.
        let big = "[" + (0..<400).map { #"{"id": \#($0), "t": "row \#($0)"}"# }.joined(separator: ",") + "]"
        let w = try versions(client, "g", ["[]", big])
        let gzip = try client.get("/feeds/g/changes?since=\(w[0])&to=\(w[1])", headers: ["Accept-Encoding": "gzip"])
        XCTAssertEqual(gzip.header("Content-Encoding"), "gzip")
        XCTAssertEqual(gzip.header("ETag"), "\"\(w[1])-gzip\"")
        XCTAssertEqual(gzip.header("Vary"), "Accept, Accept-Encoding", "one Vary, naming both")
        // A JSON Patch of a range, likewise.
        let patch = try client.get("/feeds/r/changes?since=\(v[1])&to=\(v[2])&format=json-patch")
        XCTAssertEqual(patch.header("Content-Type"), "application/json-patch+json")
        XCTAssertEqual(patch.header("Cache-Control"), "public, max-age=31536000, immutable")
    }

    func testRangesThatCannotBeAnsweredAreRefusedAndNeverKept() throws {
        let client = try startServer(["--max-versions", "2"]).client
        let v = try versions(client, "e", ["[1]", "[2]", "[3]"])
        let past = assertProblem(try client.get("/feeds/e/changes?since=\(v[1])&to=\(v[2] + 1)"), 410, "version_gone")
        XCTAssertEqual(int(past["latest"]), v[2])
        let gone = try client.get("/feeds/e/changes?since=\(v[0])&to=\(v[2])")
        assertProblem(gone, 410, "version_gone")
        XCTAssertEqual(gone.header("Cache-Control"), "no-store", "a 410 is of this moment")
        assertProblem(try client.get("/feeds/e/changes?since=\(v[2])&to=\(v[1])"), 400, "invalid_query")
        assertProblem(try client.get("/feeds/e/changes?since=\(v[1])&to=soon"), 400, "invalid_query")
        assertProblem(try client.get("/feeds/e/changes?since=\(v[1])&to=\(v[2])&offset=0&limit=5"), 400, "invalid_query")
        assertProblem(try client.get("/feeds/e/changes?since=\(v[1])&to=\(v[2])", headers: ["Accept": "text/event-stream"]), 400, "invalid_query")
        XCTAssertEqual(try client.get("/feeds/nope/changes?since=0").header("Cache-Control"), "no-store")
    }

    func testPlainQuestionsAndLongPollsAreKeptASecondAtMost() throws {
        let client = try startServer().client
        let v = try versions(client, "p", ["[1]", "[1, 2]"])
        let plain = try client.get("/feeds/p/changes?since=\(v[0])")
        XCTAssertEqual(plain.header("Cache-Control"), "public, max-age=1")
        XCTAssertNil(plain.header("ETag"), "two servers may write the latest's batch apart: only a range is tagged")
        // A long poll that ends empty is not kept: the next version comes under this URL.
        let empty = try client.get("/feeds/p/changes?since=\(v[1])&wait=1")
        XCTAssertEqual(empty.status, 200)
        XCTAssertEqual(empty.header("Cache-Control"), "no-store")
        // One that holds a batch is kept a second.
        let holding = try client.get("/feeds/p/changes?since=\(v[0])&wait=5")
        XCTAssertEqual(holding.header("Cache-Control"), "public, max-age=1")
    }

    /// A long poll names the cursor to ask with next, past the one it was asked with; an
    /// empty one asked with a cursor may be kept by nginx a second (`X-Accel-Expires`, before
    /// `Cache-Control`, which still says `no-store` to every other cache), never when the
    /// answer is private. A cursor that is not a number is refused.
    func testALongPollWithACursorMayBeKeptByNginxASecond() throws {
        let client = try startServer(["--read-token", "reader"]).client
        let v = assertVersion(try client.put("/feeds/c", "[1]", headers: ["Authorization": "Bearer reader"]))
        let empty = try client.get("/feeds/c/changes?since=\(v)&wait=1&cursor=7", headers: ["Authorization": "Bearer reader"])
        XCTAssertEqual(empty.header("Cache-Control"), "no-store")
        XCTAssertNil(empty.header("X-Accel-Expires"), "an answer to a token is never shared")
        let server = try startServer()
        let w = try versions(server.client, "c", ["[1]"])
        let kept = try server.client.get("/feeds/c/changes?since=\(w[0])&wait=1&cursor=7")
        XCTAssertEqual(kept.status, 200)
        XCTAssertEqual(kept.header("Cache-Control"), "no-store")
        XCTAssertEqual(kept.header("X-Accel-Expires"), "1")
        let names = kept.headers.map { $0.name.lowercased() }
        XCTAssertLessThan(try XCTUnwrap(names.firstIndex(of: "x-accel-expires")), try XCTUnwrap(names.firstIndex(of: "cache-control")), "nginx reads it first")
        let next = try XCTUnwrap(kept.header("BatchDiff-Cursor").flatMap(Int.init))
        XCTAssertGreaterThan(next, 7)
        XCTAssertEqual(try server.client.get("/feeds/c/changes?since=\(w[0])&wait=1&cursor=\(next)").header("BatchDiff-Cursor"), String(next + 1), "never the one asked with")
        let huge = try server.client.get("/feeds/c/changes?since=\(w[0])&wait=1&cursor=99999999999")
        XCTAssertEqual(huge.header("BatchDiff-Cursor"), "100000000000")
        let largest = try server.client.get("/feeds/c/changes?since=\(w[0])&wait=1&cursor=999999999999")
        XCTAssertLessThan(try XCTUnwrap(largest.header("BatchDiff-Cursor").flatMap(Int.init)), 999_999_999_999, "never past 12 digits")
        // An answer with a batch moves `since`: its cursor is the period's, however far ahead
        // the one asked with (followers of a busy feed do not run ahead of the clock).
        let batch = try server.client.get("/feeds/c/changes?since=0&wait=1&cursor=99999999999")
        XCTAssertEqual(int(assertJSON(batch)["to"]), w[0])
        XCTAssertLessThanOrEqual(try XCTUnwrap(batch.header("BatchDiff-Cursor").flatMap(Int.init)), next + 1, "the period's")
        // Without a cursor: no-store alone; a plain question names no cursor.
        let plain = try server.client.get("/feeds/c/changes?since=\(w[0])&wait=1")
        XCTAssertNil(plain.header("X-Accel-Expires"))
        XCTAssertNotNil(plain.header("BatchDiff-Cursor"))
        XCTAssertNil(try server.client.get("/feeds/c/changes?since=0").header("BatchDiff-Cursor"))
        for bad in ["soon", "-1", "+5", "", "1234567890123"] {
            assertProblem(try server.client.get("/feeds/c/changes?since=\(w[0])&wait=1&cursor=\(bad)"), 400, "invalid_query")
        }
        assertProblem(try server.client.get("/feeds/none/changes?since=0&cursor=soon"), 404, "feed_not_found")
    }

    /// A range is the differ's batch, never the one a patch made (which may differ): the
    /// same bytes whether asked while its end is the latest, after, or on a fresh server.
    func testARangeEndingAtAPatchIsTheDiffersBatch() throws {
        let server = try startServer()
        let client = server.client
        let first = assertVersion(try client.put("/feeds/q", #"[{"id": 1}, {"id": 2}, {"id": 3}]"#))
        // The feed is followed at `first`: the patch keeps its answer for clients there.
        _ = try client.get("/feeds/q/changes?since=\(first)")
        let patched = assertJSON(try client.request("PATCH", "/feeds/q", body: Array(#"{"ops": [{"op": "move", "id": 3, "at": "start"}, {"op": "move", "id": 2, "at": "start"}]}"#.utf8)))
        let second = try XCTUnwrap(int(patched["version"]))
        let whileLatest = try client.get("/feeds/q/changes?since=\(first)&to=\(second)").text
        assertVersion(try client.put("/feeds/q", "[]"), second + 1)
        XCTAssertEqual(try client.get("/feeds/q/changes?since=\(first)&to=\(second)").text, whileLatest)
        // The same two versions written whole on another server: the same batch.
        let elsewhere = try startServer().client
        let other = try [#"[{"id": 1}, {"id": 2}, {"id": 3}]"#, #"[{"id": 2}, {"id": 3}, {"id": 1}]"#].map { assertVersion(try elsewhere.put("/feeds/q", $0)) }
        let range = try elsewhere.get("/feeds/q/changes?since=\(other[0])&to=\(other[1])").text
        let batch = { (text: String) in text.replacingOccurrences(of: #""from":\d+,"to":\d+,"#, with: "", options: .regularExpression) }
        XCTAssertEqual(batch(range), batch(whileLatest))
        XCTAssertNotEqual(batch(range), range, "the versions were taken out")
    }

    func testAnswersToTokensArePrivateUnlessFeedsArePublic() throws {
        for (flags, expected) in [([String](), "private, max-age=1"), (["--public-feeds"], "public, max-age=1")] {
            let server = try startServer(["--read-token", "reader"] + flags)
            let v = assertVersion(try server.client.put("/feeds/t", "[1]", headers: ["Authorization": "Bearer reader"]))
            let answer = try server.client.get("/feeds/t/changes?since=0", headers: ["Authorization": "Bearer reader"])
            XCTAssertEqual(answer.header("Cache-Control"), expected, "\(flags)")
            let range = try server.client.get("/feeds/t/changes?since=0&to=\(v)", headers: ["Authorization": "Bearer reader"])
            XCTAssertEqual(range.header("Cache-Control"), expected.replacingOccurrences(of: "max-age=1", with: "max-age=31536000, immutable"))
            // A token in the query is a token all the same.
            let query = try server.client.get("/feeds/t/changes?since=0&access_token=reader")
            XCTAssertEqual(query.status, 200)
            XCTAssertEqual(query.header("Cache-Control"), expected, "\(flags): a token in the query")
        }
    }
}
