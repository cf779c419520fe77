import Foundation
import XCTest

/// Inputs that must be refused, or kept apart, before they reach a feed (CONTRACT 13 and
/// docs/errors.md): objects naming a member twice, member names compared by their Unicode
/// scalars, feed ids that proxies rewrite, ambiguous request framing, gzip bodies that
/// never end, and passwords that must never be printed. Each refusal changes nothing.
final class InputRulesTests: ServerTestCase {
    /// Readers disagree on which of two values of one member wins (`{"price":1,"price":2}`
    /// then the swapped order was "unchanged"): 400 `duplicate_member`, the detail naming it.
    func testAnObjectNamingAMemberTwiceIsRefused() throws {
        let client = try startServer().client
        let version = assertVersion(try client.put("/feeds/d", #"[{"id":1,"price":1}]"#))
        for (body, member) in [
            (#"[{"id":1,"price":1,"price":2}]"#, "price"), (#"[{"id":1,"a":{"b":1,"b":2}}]"#, "b"),
            (#"[{"id":1,"a":[{"c":1,"d":2,"c":3}]}]"#, "c"), (#"[{"id":1,"id":2}]"#, "id"),
        ] {
            let problem = assertProblem(try client.put("/feeds/d", body), 400, "duplicate_member")
            XCTAssertTrue((problem["detail"] as? String ?? "").contains("\"\(member)\" twice"), "\(body): \(problem)")
            let diff = #"{"old":[],"new":"# + body + "}"
            assertProblem(try client.post("/diff", diff), 400, "duplicate_member")
        }
        let sectioned = #"{"sections":[{"id":"s","title":"a","title":"b","items":[]}]}"#
        assertProblem(try client.put("/feeds/sections", sectioned), 400, "duplicate_member")
        assertProblem(try client.get("/feeds/sections"), 404, "feed_not_found")
        // Many members: found through a set.
        let wide = "[{" + (0..<40).map { #""m\#($0)":\#($0)"# }.joined(separator: ",") + #","m7":0}]"#
        assertProblem(try client.put("/feeds/d", wide), 400, "duplicate_member")
        // Names that differ in their scalars are two members, canonically equivalent or not.
        XCTAssertEqual(assertJSON(try client.get("/feeds/d"))["version"] as? Int, version, "nothing changed")
        assertVersion(try client.put("/feeds/d", #"[{"id":1,"caf\u00e9":1,"cafe\u0301":2}]"#), version + 1)
    }

    /// Member names compare by their scalars in a JSON Patch too: a section header's `café`
    /// renamed to `cafe\u0301` gave an empty patch, and a header with both spellings lost
    /// one; a client silently kept the old name.
    func testJSONPatchesKeepCanonicallyEquivalentNamesApart() throws {
        let client = try startServer().client
        let first = assertVersion(try client.put("/feeds/p", #"{"sections":[{"id":"s","caf\u00e9":1,"items":[]}]}"#))
        assertVersion(try client.put("/feeds/p", #"{"sections":[{"id":"s","cafe\u0301":1,"items":[]}]}"#), first + 1)
        assertVersion(try client.put("/feeds/p", #"{"sections":[{"id":"s","caf\u00e9":1,"cafe\u0301":2,"items":[]}]}"#), first + 2)
        // Each operation as text whose non-ASCII scalars are spelled out (String equality
        // would take the two names for one).
        func spelled(_ operation: [String: Any]) -> String {
            let path = (operation["path"] as? String ?? "").unicodeScalars.map { $0.isASCII ? String($0) : "\\u{\(String($0.value, radix: 16))}" }
            return "\(operation["op"] as? String ?? "") \(path.joined()) \(int(operation["value"]) ?? -1)"
        }
        for (since, expected) in [
            (first, [#"add /sections/0/cafe\u{301} 2"#]),
            (first + 1, [#"replace /sections/0/cafe\u{301} 2"#, #"add /sections/0/caf\u{e9} 1"#]),
        ] {
            let patch = try client.get("/feeds/p/changes?since=\(since)&format=json-patch")
            XCTAssertEqual(patch.status, 200)
            XCTAssertEqual(try XCTUnwrap(patch.json as? [[String: Any]]).map(spelled), expected, patch.text)
        }
        let renamed = try client.post("/diff", #"{"old":{"sections":[{"id":"s","caf\u00e9":1,"items":[]}]},"new":{"sections":[{"id":"s","cafe\u0301":1,"items":[]}]},"options":{"format":"json-patch"}}"#)
        let operations = try XCTUnwrap(renamed.json as? [[String: Any]])
        XCTAssertEqual(operations.compactMap { $0["op"] as? String }.sorted(), ["add", "remove"], renamed.text)
    }

    /// `.` and `..` are path segments proxies normalise away: never feed ids.
    func testDotSegmentsAreNotFeedIDs() throws {
        let client = try startServer().client
        for name in ["%2E", "%2E%2E", ".", ".."] {
            let problem = assertProblem(try client.put("/feeds/\(name)", "[1]"), 400, "invalid_feed_id")
            XCTAssertNotNil(problem["detail"], name)
        }
        assertVersion(try client.put("/feeds/a.b", "[1]"))
        assertVersion(try client.put("/feeds/...", "[1]"))
        XCTAssertEqual((assertJSON(try client.get("/feeds"))["feeds"] as? [Any])?.count, 2)
    }

    /// Two `Content-Length`s, or one listing two lengths, are read one way here and maybe
    /// another by a proxy in front (request smuggling): 400, the connection closed.
    func testAmbiguousContentLengthIsRefused() throws {
        let client = try startServer().client
        // Two lines reach the server, joined into a list, which it refuses (a problem
        // document); libmicrohttpd refuses the other spellings itself (its own 400 page).
        for lengths in ["Content-Length: 3\r\nContent-Length: 3", "Content-Length: 3\r\nContent-Length: 5", "Content-Length: 3, 3", "Content-Length: 3,5", "Content-Length: +3"] {
            let connection = try client.connect()
            try connection.send("PUT /feeds/smuggled HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\(lengths)\r\n\r\n[1]")
            let response = try connection.readResponse(timeout: 5)
            // (libmicrohttpd refuses a length that is not a number itself; two lines of one
            // length reach the server, which refuses them as a problem document.)
            XCTAssertEqual(response.status, 400, lengths)
            if lengths.contains("\r\n") || response.header("content-type") == "application/problem+json" {
                XCTAssertEqual(response.object["code"] as? String, "invalid_header", lengths)
            }
            XCTAssertTrue(connection.waitForClose(timeout: 5), lengths)
        }
        assertProblem(try client.get("/feeds/smuggled"), 404, "feed_not_found")
    }

    /// A gzip body whose header never ends inflates to nothing: its compressed bytes count
    /// against the body limit too, so it is dropped once they pass it, and the connection
    /// closed once it runs on past twice the limit (and 1 MiB), as any body's. It was
    /// inflated, to nothing, until the body timeout however much was sent.
    func testAGzipHeaderThatNeverEndsIsCutAtTheLimit() throws {
        let client = try startServer(["--body-limit", "4096", "--body-timeout", "60"]).client
        let connection = try client.connect(timeout: 10)
        // A gzip header with a file name (FNAME) that goes on without its closing zero.
        try connection.send("PUT /feeds/g HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n")
        let header: [UInt8] = [0x1F, 0x8B, 8, 0x08, 0, 0, 0, 0, 0, 3]
        let started = Date()
        try connection.send(Array(String(header.count + 1000, radix: 16).utf8) + Array("\r\n".utf8) + header + Array(repeating: UInt8(ascii: "a"), count: 1000) + Array("\r\n".utf8))
        // 1.25 MiB more of the name, and no last chunk.
        let chunk = Array("10000\r\n".utf8) + Array(repeating: UInt8(ascii: "a"), count: 1 << 16) + Array("\r\n".utf8)
        for _ in 0..<20 { try? connection.send(chunk) }
        XCTAssertTrue(connection.waitForClose(timeout: 15), "the connection is closed once the body runs on past the limit")
        XCTAssertLessThan(Date().timeIntervalSince(started), 20, "not at the body timeout")
        assertProblem(try client.get("/feeds/g"), 404, "feed_not_found")
    }

    /// A password in `--store` is never printed: not in libpq's complaint about the URI,
    /// not in the usage error of a scheme with a typo. The start-up log names the store,
    /// without it.
    func testAStorePasswordIsNeverPrinted() throws {
        for store in ["postgres://alice:S3cret%zzPW@127.0.0.1:1/feeds", "postgress://alice:S3cretPW@127.0.0.1:1/feeds",
                      "postgres://alice@127.0.0.1:1/feeds?password=S3cret%zzPW"] {
            let run = try CommandRun(["serve", "--port", "0", "--store", store])
            XCTAssertNotEqual(run.status, 0, store)
            XCTAssertFalse((run.output + run.error).contains("S3cret"), run.error)
            XCTAssertTrue(run.error.contains("--store"), run.error)
        }
        let server = try startServer(["--store", "postgres://alice:S3cretPW@127.0.0.1:1/feeds", "--log-level", "notice"])
        XCTAssertTrue(eventually(timeout: 5) { server.log.contains("listening") })
        let problem = assertProblem(try server.client.get("/feeds/x"), 503, "store_unavailable")
        XCTAssertFalse("\(problem)".contains("127.0.0.1") || "\(problem)".contains("alice"), "\(problem)")
        _ = server.terminate()
        XCTAssertTrue(server.log.contains("store=postgres://alice:***@127.0.0.1:1/feeds"), server.log)
        XCTAssertFalse(server.log.contains("S3cret"), server.log)
    }
}
