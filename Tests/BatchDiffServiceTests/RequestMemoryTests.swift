import Foundation
import XCTest

/// Request bodies in flight share a memory budget (--request-memory, each body byte counted
/// 40 times): a request that does not fit beside those in flight gets 503 server_busy with
/// Retry-After and changes nothing; one alone always fits; small bodies and requests without
/// one go on.
final class RequestMemoryTests: ServerTestCase {
    private let body: String = {
        let items = (0..<4000).map { "\"row-\($0)\"" }
        return #"{"old":["# + items.joined(separator: ",") + #"],"new":["# + items.reversed().joined(separator: ",") + "]}"
    }()

    func testABodyThatDoesNotFitBesideThoseInFlightIs503() throws {
        // 1 MiB holds 26 KiB of bodies; the body here is about 70 KB, so only one at a time.
        let server = try startServer(["--request-memory", "\(1 << 20)"])
        let client = server.client
        XCTAssertEqual(try client.post("/diff", body).status, 200, "one request alone always fits")
        // That request completes just after its answer is read: until then its reservation
        // would pass for the next one's.
        XCTAssertTrue(eventually(timeout: 5) { (try? client.metric("batchdiff_request_bytes_in_flight")) == 0 })

        // One request in flight: its head and half its body sent.
        let bytes = HTTPClient.requestBytes("POST", "/diff", body: Array(body.utf8), headers: [:])
        let slow = try client.connect()
        try slow.send(Array(bytes.prefix(bytes.count / 2)))
        XCTAssertTrue(eventually(timeout: 5) { (try? client.metric("batchdiff_request_bytes_in_flight")) ?? 0 > 0 })

        let refused = try client.post("/diff", body)
        assertProblem(refused, 503, "server_busy")
        XCTAssertEqual(refused.header("retry-after"), "1")
        let chunk = Array(body.utf8)
        let chunked = try client.post("/diff", bytes: Array(String(chunk.count, radix: 16).utf8) + Array("\r\n".utf8) + chunk + Array("\r\n0\r\n\r\n".utf8),
                                      headers: ["Transfer-Encoding": "chunked"])
        assertProblem(chunked, 503, "server_busy")
        let put = try client.put("/feeds/big", body)
        assertProblem(put, 503, "server_busy")
        assertProblem(try client.get("/feeds/big"), 404, "feed_not_found")  // a refused PUT stores nothing
        XCTAssertEqual(try client.get("/healthz").status, 200, "requests without a body go on")
        XCTAssertEqual(try client.post("/diff", #"{"old":[1],"new":[2]}"#).status, 200, "small bodies go on beside a large one")

        try slow.send(Array(bytes.dropFirst(bytes.count / 2)))
        XCTAssertEqual(try slow.readResponse().status, 200)
        XCTAssertTrue(eventually(timeout: 5) { (try? client.metric("batchdiff_request_bytes_in_flight")) == 0 }, "the reservation is given back")
        XCTAssertEqual(try client.post("/diff", body).status, 200, "room again once it is answered")
        XCTAssertEqual(try client.metric("batchdiff_requests_refused_busy_total"), 3)
    }

    /// A chunked body reserves as it grows; alone it always fits, however many steps it
    /// takes, and past the body limit it is a 413, not a 503.
    func testAChunkedBodyAloneAlwaysFits() throws {
        let client = try startServer(["--request-memory", "\(50 << 20)", "--body-limit", "\(2 << 20)"]).client
        func chunked(_ text: String) -> [UInt8] {
            let bytes = Array(text.utf8)
            return Array(String(bytes.count, radix: 16).utf8) + Array("\r\n".utf8) + bytes + Array("\r\n0\r\n\r\n".utf8)
        }
        let items = (0..<100_000).map { "\"r\($0)\"" }.joined(separator: ",")  // about 0.9 MB a side
        let body = #"{"old":["# + items + #"],"new":["# + items + "]}"
        XCTAssertGreaterThan(body.utf8.count, 1 << 21 - (1 << 20))
        XCTAssertLessThan(body.utf8.count, 2 << 20)
        let answer = try client.post("/diff", bytes: chunked(body), headers: ["Transfer-Encoding": "chunked"])
        XCTAssertEqual(answer.status, 200, answer.text.prefix(300).description)
        let oversized = try client.post("/diff", bytes: chunked(body + String(repeating: " ", count: 1 << 20)), headers: ["Transfer-Encoding": "chunked"])
        assertProblem(oversized, 413, "body_too_large")
        XCTAssertTrue(eventually(timeout: 5) { (try? client.metric("batchdiff_request_bytes_in_flight")) == 0 }, "every reservation given back")
    }

    /// Memory per request byte, the worst case: items of two bytes each (a zero and a comma).
    /// A `POST /diff` of 2,000,000 zeros a side grows the server's peak resident memory by at
    /// most 16 times the body (README: 24 bytes an item, each side's items grown at once to
    /// what the body can hold). It was 35 times with 40-byte items grown by doubling.
    func testPeakMemoryOfTheSmallestItemsStaysWithin16TimesTheBody() throws {
        let zeros = [String](repeating: "0", count: 2_000_000).joined(separator: ",")
        try assertPeakGrowth(of: #"{"old":["# + zeros + #"],"new":["# + zeros + "]}", atMost: 16)
    }

    /// The same in 100 sections a side: all sections' items are kept in one store as they
    /// are parsed, and the differ reads them there. It was 52 times with an array per section
    /// and every row copied into one more array for the differ.
    func testPeakMemoryOfTheSmallestItemsInSectionsStaysWithin16TimesTheBody() throws {
        let items = [String](repeating: "0", count: 20_000).joined(separator: ",")
        let side = #"{"sections":["# + (0..<100).map { #"{"id":\#($0),"items":["# + items + "]}" }.joined(separator: ",") + "]}"
        try assertPeakGrowth(of: #"{"old":"# + side + #","new":"# + side + "}", atMost: 16)
    }

    /// The worst body known, every row replaced: 1,000,000 zeros against as many ones (an
    /// identity table for a million rows, an answer listing every index, 4x the body) costs
    /// less than the 40 bytes per body byte that --request-memory counts
    /// (`BatchDiffService.memoryPerBodyByte`). It cost 41 before rows were kept in columns.
    func testEveryRowReplacedStaysWithinWhatTheRequestMemoryCounts() throws {
        let body = #"{"old":["# + [String](repeating: "0", count: 1_000_000).joined(separator: ",")
            + #"],"new":["# + [String](repeating: "1", count: 1_000_000).joined(separator: ",") + "]}"
        try assertPeakGrowth(of: body, atMost: 40)
    }

    /// A member name repeated in the envelope makes one collection with room for its rows,
    /// not one per repeat: 300,000 times `"old":[1]` (room for a thousand rows each, a page
    /// touched per 10 body bytes) grew peak memory by several hundred times the body. The
    /// body is refused (a member named twice), once read.
    func testRepeatedCollectionMembersStayWithinWhatTheRequestMemoryCounts() throws {
        let body = "{" + [String](repeating: #""old":[1],"#, count: 300_000).joined() + #""new":[1]}"#
        try assertPeakGrowth(of: body, atMost: 40, status: 400)
    }

    /// Posts `body` to `/diff` on a fresh server and checks that its peak resident memory grew
    /// by at most `factor` times the body.
    private func assertPeakGrowth(of body: String, atMost factor: Double, status: Int = 200, file: StaticString = #filePath, line: UInt = #line) throws {
        let server = try startServer(["--body-limit", "\(64 << 20)", "--log-level", "warning"])
        let bytes = Array(body.utf8)
        let before = try server.peakResidentBytes()
        let answer = try server.client.request("POST", "/diff", body: bytes, timeout: 120)
        XCTAssertEqual(answer.status, status, answer.text.prefix(300).description, file: file, line: line)
        let growth = Double(try server.peakResidentBytes() - before) / Double(bytes.count)
        XCTAssertLessThanOrEqual(growth, factor, "peak memory grew by \(growth) times the body", file: file, line: line)
    }
}
