import BatchDiff
import Foundation
import XCTest

/// Every route and every error status of docs/errors.md, on a live server.
final class RouteTests: ServerTestCase {
    private var server: ServerProcess!
    private var client: HTTPClient { server.client }

    override func setUpWithError() throws {
        try super.setUpWithError()
        server = try startServer(["--body-limit", "200000"])
    }

    override func tearDown() {
        server = nil
        super.tearDown()
    }

    /// The server still answers `/healthz` (after something hostile).
    private func assertStillServing(file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(try? client.get("/healthz").status, 200, "the server no longer serves", file: file, line: line)
    }

    func testHealthz() throws {
        let response = try client.get("/healthz")
        XCTAssertEqual(assertJSON(response)["status"] as? String, "ok")
        let head = try client.request("HEAD", "/healthz")
        XCTAssertEqual(head.status, 200)
        XCTAssertTrue(head.body.isEmpty)
        XCTAssertEqual(assertJSON(try client.get("/readyz"))["status"] as? String, "ready")
    }

    func testMetricsCountRequestsAndHaveALatencyHistogram() throws {
        XCTAssertEqual(try client.get("/healthz").status, 200)
        XCTAssertEqual(try client.get("/nowhere").status, 404)
        // An exchange is counted when it completes, just after its answer is sent: poll.
        let healthLine = #"batchdiff_requests_total{route="/healthz",method="GET",status="200"} 1"#
        var response = try client.get("/metrics")
        _ = eventually(timeout: 3) {
            response = (try? client.get("/metrics")) ?? response
            return response.text.contains(healthLine) && response.text.contains(#"status="404""#)
        }
        XCTAssertEqual(response.status, 200)
        XCTAssertTrue(response.header("content-type")?.hasPrefix("text/plain") ?? false, "\(response.headers)")
        let lines = response.text.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.contains("# TYPE batchdiff_requests_total counter"), response.text)
        XCTAssertTrue(lines.contains(healthLine), response.text)
        XCTAssertTrue(lines.contains { $0.hasPrefix("batchdiff_requests_total{") && $0.contains(#"status="404""#) }, response.text)
        XCTAssertTrue(lines.contains("# TYPE batchdiff_request_duration_seconds histogram"), response.text)
        let buckets = lines.filter { $0.hasPrefix("batchdiff_request_duration_seconds_bucket{") }
        XCTAssertGreaterThan(buckets.count, 1, response.text)
        let infinite = buckets.first { $0.contains(#"le="+Inf""#) }
        let count = lines.first { $0.hasPrefix("batchdiff_request_duration_seconds_count ") }
        XCTAssertNotNil(infinite, response.text)
        XCTAssertEqual(infinite?.split(separator: " ").last, count?.split(separator: " ").last, "+Inf bucket equals _count")
        XCTAssertGreaterThanOrEqual(Int(count?.split(separator: " ").last ?? "") ?? 0, 2)
        XCTAssertTrue(lines.contains { $0.hasPrefix("batchdiff_request_duration_seconds_sum ") }, response.text)
    }

    // MARK: POST /diff

    private func diff(_ body: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        assertJSON(try client.post("/diff", body), file: file, line: line)
    }

    func testDiffOfLists() throws {
        XCTAssertEqual(
            try decodeListBatch(diff(#"{"old": ["a", "b", "c"], "new": ["a", "c", "d"]}"#)),
            ListBatch(rows: RowChanges(deleted: [1], inserted: [2]), oldCount: 3, newCount: 3)
        )
        XCTAssertEqual(
            try decodeListBatch(diff(#"{"old": [{"id": 1, "t": "x"}, {"id": 2, "t": "y"}], "new": [{"t": "x2", "id": 1}, {"id": 2, "t": "y"}, {"id": 3}]}"#)),
            ListBatch(rows: RowChanges(inserted: [2], reloaded: [0]), oldCount: 2, newCount: 3)
        )
        XCTAssertEqual(
            try decodeListBatch(diff(#"{"old": ["a", "b", "c", "d"], "new": ["b", "c", "d", "a"]}"#)),
            ListBatch(rows: RowChanges(moved: [Move(from: 0, to: 3)]), oldCount: 4, newCount: 4)
        )
        // Member order and 1 vs 1.0 do not make a change; idKey picks the identity member.
        XCTAssertEqual(
            try decodeListBatch(diff(#"{"old": [{"k": "a", "n": 1, "m": 2}, {"k": "b"}, {"k": "c"}], "new": [{"k": "b", "x": 1}, {"k": "c"}, {"m": 2, "n": 1.0, "k": "a"}], "options": {"idKey": "k"}}"#)),
            ListBatch(rows: RowChanges(reloaded: [1], moved: [Move(from: 0, to: 2)]), oldCount: 3, newCount: 3)
        )
        // Without moves, a move is a delete plus an insert.
        XCTAssertEqual(
            try decodeListBatch(diff(#"{"old": ["a", "b", "c", "d"], "new": ["b", "c", "d", "a"], "options": {"moves": false}}"#)),
            ListBatch(rows: RowChanges(deleted: [0], inserted: [3]), oldCount: 4, newCount: 4)
        )
    }

    /// The companies example (docs/batch-format.md §2.6) gives exactly the batch shown there.
    func testDiffOfTheCompaniesExample() throws {
        func product(_ id: String, _ title: String) -> [String: Any] { ["id": id, "title": title] }
        func company(_ name: String, _ items: [[String: Any]]) -> [String: Any] { ["id": name, "items": items] }
        let old: [String: Any] = ["sections": [
            company("Amazon", [product("kindle", "Kindle"), product("kindle-fire", "Kindle Fire"), product("kindle-fire-hd-7", "Kindle Fire HD 7")]),
            company("Apple", [product("ipad", "iPad"), product("iphone", "iPhone"), product("ipod", "iPod")]),
            company("Blackberry", [product("q5", "Q5"), product("q10", "Q10"), product("z10", "Z10")]),
            company("Google", [product("nexus-4", "Nexus 4"), product("nexus-7", "Nexus 7"), product("nexus-10", "Nexus 10")]),
        ]]
        let new: [String: Any] = ["sections": [
            company("Amazon", [product("kindle", "Kindle"), product("kindle-fire-hd-7", "Kindle Fire HD 7"), product("kindle-fire-hd-89", "Kindle Fire HD 8.9")]),
            company("Apple", [product("ipad", "New iPad"), product("ipad-mini", "iPad Mini"), product("iphone", "iPhone 5"), product("ipod", "iPod Touch")]),
            company("Google", [product("nexus-4", "Nexus 4"), product("nexus-7", "Nexus 7"), product("nexus-10", "Nexus 10"), product("nexus-watch", "Nexus Watch")]),
            company("Microsoft", [product("phone", "Phone"), product("surface-rt", "Surface RT"), product("surface-pro", "Surface Pro")]),
        ]]
        let response = try diff(jsonText(["old": old, "new": new]))
        let expected = """
        {
          "sections": {"deleted": [2], "inserted": [3], "updated": [], "moved": []},
          "rows": {
            "deleted":  [[0, 1]],
            "inserted": [[0, 2], [1, 1], [2, 3]],
            "reloaded": [[1, 0], [1, 1], [1, 2]],
            "moved":    []
          },
          "counts": {"old": [3, 3, 3, 3], "new": [3, 4, 4, 3]}
        }
        """
        XCTAssertEqual(try decodeSectionedBatch(response), try decodeSectionedBatch(parseJSON(expected) as! [String: Any]))
        XCTAssertEqual(canonicalJSON(response), canonicalJSON(parseJSON(expected)), "the exact document, empty lists included")
    }

    // MARK: Errors

    func testUnknownRouteIs404() throws {
        for path in ["/nope", "/index.html", "/healthz/", "/healthz/x", "/diff/", "/feed/a"] {
            assertProblem(try client.get(path), 404, "not_found")
        }
        // Under /feeds/, what stands where the id goes is a feed id, and a `/` (written, or
        // %2F decoded) is no part of one (docs/feeds.md §1); it was a 404 "no route".
        for path in ["/feeds/a/b", "/feeds/a%2Fb", "/feeds/team/news", "/feeds/team/news/changes?since=0", "/feeds/a/changes/", "/feeds/a/changes/x", "/feeds//"] {
            let problem = assertProblem(try client.get(path), 400, "invalid_feed_id")
            XCTAssertNotNil(problem["detail"], path)
        }
        assertProblem(try client.put("/feeds/team/news", "[1]"), 400, "invalid_feed_id")
        XCTAssertEqual((assertJSON(try client.get("/feeds/"))["feeds"] as? [Any])?.count, 0, "/feeds/ is the list of feeds")
        assertProblem(try client.get("/feeds/never-stored"), 404, "feed_not_found")
        assertProblem(try client.get("/feeds/never-stored/changes?since=0"), 404, "feed_not_found")
    }

    func testWrongMethodIs405WithAllow() throws {
        let cases: [(method: String, path: String, allowed: Set<String>)] = [
            ("GET", "/diff", ["POST", "OPTIONS"]),
            ("PUT", "/diff", ["POST", "OPTIONS"]),
            ("POST", "/healthz", ["GET", "HEAD", "OPTIONS"]),
            ("DELETE", "/metrics", ["GET", "HEAD", "OPTIONS"]),
            ("POST", "/feeds/x", ["GET", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS"]),
            ("PATCH", "/feeds/x/changes", ["GET", "HEAD", "OPTIONS"]),
            ("PUT", "/feeds/x/changes", ["GET", "HEAD", "OPTIONS"]),
        ]
        for (method, path, allowed) in cases {
            let response = try client.request(method, path, body: method == "GET" || method == "DELETE" ? nil : Array("[]".utf8))
            assertProblem(response, 405, "method_not_allowed")
            let allow = Set((response.header("allow") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            XCTAssertEqual(allow, allowed, "\(method) \(path): Allow")
        }
    }

    func testMalformedJSONIs400WithTheByteOffset() throws {
        let body = #"{"old": [1, 2,, 3], "new": []}"#
        let problem = assertProblem(try client.post("/diff", body), 400, "malformed_json")
        let detail = problem["detail"] as? String ?? ""
        XCTAssertTrue(detail.contains("byte 14"), "the detail names the offset of the second comma: \(detail)")
        for bad in ["", "   ", "{", #"{"old": [], "new": []} x"#, #"{"old": ['a'], "new": []}"#, #"{"old": [01], "new": []}"#,
                    #"{"old": [1,], "new": []}"#, #"{"old": ["\x"], "new": []}"#, "{\"old\": [\"a\tb\"], \"new\": []}", "nul"] {
            assertProblem(try client.post("/diff", bad), 400, "malformed_json")
        }
        assertStillServing()
    }

    func testTruncatedBodyIs400() throws {
        let body = #"{"old": [1, 2, 3], "new": [1, 2"#
        let problem = assertProblem(try client.post("/diff", body), 400, "malformed_json")
        let detail = problem["detail"] as? String ?? ""
        XCTAssertTrue(detail.contains("byte \(body.utf8.count)"), "the detail names the end of the body: \(detail)")
    }

    /// A body shorter than its Content-Length, then the end of the stream: never a 2xx,
    /// and the server serves on.
    func testBodyCutShortOfItsContentLengthIsNotServed() throws {
        let connection = try client.connect()
        try connection.send("POST /diff HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"old\": [1], \"new\"")
        usleep(100_000)  // the end of stream after the bytes, not in the same read
        connection.shutdownWrite()
        // The server closes the connection (or answers 4xx); libmicrohttpd may also notice the
        // end of stream only at the idle timeout, so no answer within the wait is accepted too.
        if let response = try? connection.readResponse(timeout: 2) {
            XCTAssertTrue((400..<500).contains(response.status), "a truncated body got \(response.status): \(response.text)")
        }
        assertStillServing()
    }

    func testWrongContentTypeIs415() throws {
        for type in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx"] {
            assertProblem(try client.post("/diff", #"{"old": [], "new": []}"#, headers: ["Content-Type": type]), 415, "unsupported_media_type")
        }
        assertProblem(try client.put("/feeds/typed", "[]", headers: ["Content-Type": "text/csv"]), 415, "unsupported_media_type")
        // JSON media types, with parameters, are fine.
        for type in ["application/json; charset=utf-8", "Application/JSON", "application/vnd.batch+json", " application/json ;charset=utf-8"] {
            XCTAssertEqual(try client.post("/diff", #"{"old": [], "new": []}"#, headers: ["Content-Type": type]).status, 200, type)
        }
    }

    func testWrongShapeIs422() throws {
        let cases = [
            #"{"old": [1], "new": {"sections": []}}"#,
            #"{"old": {"sections": [{"id": 1, "items": []}]}, "new": [1]}"#,
            #"[1, 2]"#,
            #""text""#,
            #"{"old": []}"#,
            #"{"new": []}"#,
            #"{"old": [], "new": [], "extra": 1}"#,
            #"{"old": 1, "new": []}"#,
            #"{"old": {"sections": [{"id": 1}]}, "new": {"sections": []}}"#,
            #"{"old": {"sections": [{"id": 1, "items": 3}]}, "new": {"sections": []}}"#,
        ]
        for body in cases {
            assertProblem(try client.post("/diff", body), 422, "invalid_shape")
        }
    }

    func testBodyOverTheLimitByContentLengthIs413() throws {
        let small = try startServer(["--body-limit", "1024"])
        let items = (0..<400).map { "\($0)" }.joined(separator: ",")
        let body = #"{"old": [], "new": [\#(items)]}"#
        XCTAssertGreaterThan(body.utf8.count, 1024)
        // Only the headers are sent: the limit is enforced before any body byte is read.
        let connection = try small.client.connect()
        try connection.send("POST /diff HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n")
        let problem = assertProblem(try connection.readResponse(timeout: 5), 413, "body_too_large")
        XCTAssertTrue((problem["detail"] as? String ?? "").contains("1024"), "the detail gives the limit")
        XCTAssertTrue(connection.waitForClose(timeout: 5), "the connection is closed after a 413")
        // With the body sent as well.
        assertProblem(try small.client.post("/diff", body), 413, "body_too_large")
        // Just under the limit is fine.
        let fits = #"{"old": [], "new": [1, 2, 3]}"#
        XCTAssertEqual(try small.client.post("/diff", fits).status, 200)
        XCTAssertEqual(try small.client.get("/healthz").status, 200)
    }

    /// A request refused for its route, method, token or content type is answered from its
    /// headers: the body is never waited for (only the headers are sent here), and the
    /// connection closes after the answer.
    func testARefusedRequestIsAnsweredBeforeItsBody() throws {
        let server = try startServer(["--write-token", "s3cret"])
        let refusals: [(head: String, status: Int, code: String)] = [
            ("PUT /feeds/x HTTP/1.1\r\nContent-Type: application/json\r\nExpect: 100-continue", 401, "unauthorized"),
            ("PUT /feeds/x HTTP/1.1\r\nContent-Type: application/json\r\nAuthorization: Bearer nope", 403, "forbidden"),
            ("POST /nowhere HTTP/1.1\r\nContent-Type: application/json", 404, "not_found"),
            ("DELETE /healthz HTTP/1.1\r\nContent-Type: application/json", 405, "method_not_allowed"),
            ("POST /diff HTTP/1.1\r\nContent-Type: text/plain", 415, "unsupported_media_type"),
        ]
        for refusal in refusals {
            let connection = try server.client.connect()
            try connection.send(refusal.head + "\r\nHost: x\r\nContent-Length: 10000000\r\n\r\n")
            assertProblem(try connection.readResponse(timeout: 5), refusal.status, refusal.code)
            XCTAssertTrue(connection.waitForClose(timeout: 5), "\(refusal.head): the connection stays open for a body no one reads")
        }
        XCTAssertEqual(try server.client.metric("batchdiff_received_bytes_total"), 0, "refused bodies were read")
    }

    /// An absolute-form request target (RFC 9112 section 3.2.2) is served by its path.
    func testAbsoluteFormTargetIsServedByItsPath() throws {
        let connection = try startServer().client.connect()
        XCTAssertEqual(try connection.request("GET", "http://localhost:8080/healthz").status, 200)
        let problem = assertProblem(try connection.request("GET", "http://localhost/nowhere?x=1"), 404, "not_found")
        XCTAssertTrue((problem["detail"] as? String ?? "").contains("/nowhere"))
    }

    /// A complete chunked body over the limit gets a 413 (at the latest when it ends), and
    /// a chunked body under the limit is read whole.
    func testChunkedBodyOverTheLimitIs413() throws {
        let small = try startServer(["--body-limit", "1024", "--connection-timeout", "10"])
        let connection = try small.client.connect()
        let chunk = String(repeating: "1,", count: 200)  // 400 bytes
        let text = "{\"old\": [], \"new\": [" + String(repeating: chunk, count: 4) + "1]}"
        var request = "POST /diff HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        var rest = Substring(text)
        while !rest.isEmpty {
            let piece = rest.prefix(400)
            request += String(piece.utf8.count, radix: 16) + "\r\n" + piece + "\r\n"
            rest = rest.dropFirst(400)
        }
        request += "0\r\n\r\n"
        try connection.send(request)
        do {
            assertProblem(try connection.readResponse(timeout: 5), 413, "body_too_large")
        } catch {
            XCTFail("no answer to a \(text.utf8.count)-byte chunked body over the 1024-byte limit within 5 s: \(error)")
        }
        // A small chunked body is read whole and served.
        let fine = try small.client.connect()
        let body = #"{"old": [1, 2], "new": [2, 1, 3]}"#
        try fine.send("POST /diff HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5\r\n" + body.prefix(5) + "\r\n" + String(body.utf8.count - 5, radix: 16) + "\r\n" + body.dropFirst(5) + "\r\n0\r\n\r\n")
        let response = try fine.readResponse()
        XCTAssertEqual(response.status, 200, response.text)
        XCTAssertEqual(try decodeListBatch(response.object).newCount, 3)
    }

    func testDeepNestingIs400AndTheServerStillServes() throws {
        let body = String(repeating: "[", count: 100_000)
        let problem = assertProblem(try client.post("/diff", body), 400, "malformed_json")
        XCTAssertTrue((problem["detail"] as? String ?? "").contains("nesting"), "\(problem)")
        let objects = String(repeating: #"{"a":"#, count: 30_000)
        assertProblem(try client.post("/diff", objects), 400, "malformed_json")
        let inside = #"{"old": "# + String(repeating: "[", count: 50_000) + String(repeating: "]", count: 50_000) + #", "new": []}"#
        assertProblem(try client.post("/diff", inside), 400, "malformed_json")
        assertStillServing()
    }

    func testInvalidUTF8Is400() throws {
        let cases: [[UInt8]] = [
            Array(#"{"old": [""#.utf8) + [0xFF] + Array(#""], "new": []}"#.utf8),
            Array(#"{"old": [""#.utf8) + [0xC0, 0xAF] + Array(#""], "new": []}"#.utf8),  // overlong '/'
            Array(#"{"old": [""#.utf8) + [0xED, 0xA0, 0x80] + Array(#""], "new": []}"#.utf8),  // a UTF-16 surrogate
            Array(#"{"old": [""#.utf8) + [0xE2, 0x82] + Array(#""], "new": []}"#.utf8),  // cut short
            Array(#"{"old": [""#.utf8) + [0xF4, 0x90, 0x80, 0x80] + Array(#""], "new": []}"#.utf8),  // past U+10FFFF
            Array(#"{"old": [], "new": []}"#.utf8) + [0x80],
        ]
        for body in cases {
            assertProblem(try client.post("/diff", bytes: body), 400, "malformed_json")
        }
        // Valid multi-byte text is fine.
        XCTAssertEqual(try client.post("/diff", #"{"old": ["é", "😀"], "new": ["😀"]}"#).status, 200)
        assertStillServing()
    }

    func testHugeNumbersAreAccepted() throws {
        let decimal = "1" + String(repeating: "7", count: 4999)
        let other = "1" + String(repeating: "7", count: 4998) + "8"
        // Equal values pair; numbers that differ only in their 5000th digit are different.
        XCTAssertEqual(
            try decodeListBatch(diff(#"{"old": [1e999999, \#(decimal), -1e-999999], "new": [1e999999, \#(other), -1e-999999]}"#)),
            ListBatch(rows: RowChanges(deleted: [1], inserted: [1]), oldCount: 3, newCount: 3)
        )
        XCTAssertEqual(
            try decodeListBatch(diff(#"{"old": [\#(decimal)], "new": [\#(decimal)]}"#)),
            ListBatch(rows: RowChanges(), oldCount: 1, newCount: 1)
        )
        XCTAssertEqual(
            try decodeListBatch(diff(#"{"old": [\#(decimal)], "new": [\#(other)]}"#)),
            ListBatch(rows: RowChanges(deleted: [0], inserted: [0]), oldCount: 1, newCount: 1)
        )
        XCTAssertEqual(
            try decodeListBatch(diff(#"{"old": [1e999999], "new": [2e999999]}"#)),
            ListBatch(rows: RowChanges(deleted: [0], inserted: [0]), oldCount: 1, newCount: 1)
        )
        XCTAssertEqual(
            try decodeListBatch(diff(#"{"old": [1e999999, 100], "new": [10e999998, 1e2]}"#)),
            ListBatch(rows: RowChanges(), oldCount: 2, newCount: 2), "equal numbers in other notations pair"
        )
        assertStillServing()
    }
}
