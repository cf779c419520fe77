import BatchDiff
import Foundation
import XCTest

/// SIGTERM: requests in flight are answered, new ones are refused, the process exits 0.
final class ShutdownTests: ServerTestCase {
    /// The number of parked long polls, from the metrics.
    private func parkedLongPolls(_ client: HTTPClient) -> Int? {
        (try? client.metric("batchdiff_long_polls_parked", timeout: 2)) ?? nil
    }

    /// Body bytes reserved for requests in flight, from the metrics: a request's announced
    /// body is reserved once the server has read its headers.
    private func reservedBodyBytes(_ client: HTTPClient) -> Int {
        ((try? client.metric("batchdiff_request_bytes_in_flight", timeout: 2)) ?? nil) ?? 0
    }

    /// Waits until the server has read the headers of a request announcing `bodyBytes`
    /// beyond the `before` reserved, and returns what is reserved now.
    private func waitForHeaders(_ client: HTTPClient, bodyBytes: Int, before: Int, file: StaticString = #filePath, line: UInt = #line) -> Int {
        XCTAssertTrue(eventually(timeout: 5) { reservedBodyBytes(client) >= before + bodyBytes }, "the request is not in flight", file: file, line: line)
        return reservedBodyBytes(client)
    }

    /// Waits until the server refuses new connections: it is draining.
    private func waitForDraining(_ client: HTTPClient, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(eventually(timeout: 5) { (try? client.get("/healthz", timeout: 1)) == nil }, "new connections were still served", file: file, line: line)
    }

    /// A long poll parked when SIGTERM arrives is answered (with an empty batch), and the
    /// process exits 0; afterwards connections are refused.
    func testParkedLongPollIsAnsweredAtShutdown() throws {
        let server = try startServer(["--shutdown-grace", "5"])
        let client = server.client
        let first = assertVersion(try client.put("/feeds/news", #"["a", "b"]"#))
        let answer = Collector<Result<HTTPResult, Error>>()
        let poll = Thread {
            answer.append(Result { try client.get("/feeds/news/changes?since=\(first)&wait=30", timeout: 20) })
        }
        poll.start()
        XCTAssertTrue(eventually(timeout: 5) { parkedLongPolls(client) == 1 }, "the long poll did not park")
        let signalled = Date()
        server.sendTerm()
        XCTAssertTrue(eventually(timeout: 5) { !answer.all.isEmpty }, "the parked long poll was not answered")
        XCTAssertLessThan(Date().timeIntervalSince(signalled), 3, "the long poll was answered only after its wait, not at shutdown")
        if case .success(let response) = answer.all.first {
            let object = assertJSON(response)
            XCTAssertEqual(int(object["from"]), first)
            XCTAssertEqual(int(object["to"]), first)
            XCTAssertEqual(try decodeListBatch(object), ListBatch(rows: .init(), oldCount: 2, newCount: 2), "an empty batch")
        } else {
            XCTFail("the long poll failed: \(String(describing: answer.all.first))")
        }
        XCTAssertEqual(server.terminate(signal: false, timeout: 5), 0, "exit status; log:\n\(server.log)")
        XCTAssertThrowsError(try client.get("/healthz", timeout: 2), "connections after shutdown are refused")
    }

    /// A request whose body is still arriving when SIGTERM comes is finished and answered;
    /// meanwhile new connections are refused and a new request on an open keep-alive
    /// connection gets 503.
    func testRequestInFlightIsFinishedAndNewOnesAreRefused() throws {
        let server = try startServer(["--shutdown-grace", "10"])
        let client = server.client
        let keepAlive = try client.connect()
        XCTAssertEqual(try keepAlive.request("GET", "/healthz").status, 200)
        let slow = try client.connect()
        let body = #"{"old": ["a", "b", "c"], "new": ["c", "b", "a", "d"]}"#
        let half = body.utf8.count / 2
        try slow.send("POST /diff HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
            + body.prefix(half))
        let slowReserved = waitForHeaders(client, bodyBytes: body.utf8.count, before: 0)
        let large = try client.connect()
        let items = (0..<25_000).map { "\"item-\($0)\"" }
        let largeBody = #"{"old": [], "new": ["# + items.joined(separator: ",") + "]}"
        XCTAssertGreaterThan(largeBody.utf8.count, 256 << 10)
        let largeHalf = largeBody.utf8.count / 2
        try large.send("POST /diff HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(largeBody.utf8.count)\r\n\r\n"
            + largeBody.prefix(largeHalf))
        _ = waitForHeaders(client, bodyBytes: largeBody.utf8.count, before: slowReserved)
        server.sendTerm()
        // New connections are refused while draining.
        waitForDraining(client)
        XCTAssertTrue(server.process.isRunning, "the server exited with a request in flight")
        // A new request on a connection opened before gets 503 (and the connection closes).
        if let refused = try? keepAlive.request("GET", "/readyz", timeout: 3) {
            assertProblem(refused, 503, "shutting_down")
            XCTAssertEqual(refused.header("connection")?.lowercased(), "close")
        } else {
            XCTFail("a request on an open connection got no answer while shutting down")
        }
        // The requests in flight are finished and answered, a large one (answered on a
        // worker thread) too.
        try slow.send(String(body.dropFirst(half)))
        let response = try slow.readResponse(timeout: 5)
        XCTAssertEqual(response.status, 200, response.text)
        XCTAssertEqual(try decodeListBatch(response.object).newCount, 4)
        try large.send(String(largeBody.dropFirst(largeHalf)))
        let largeResponse = try large.readResponse(timeout: 10)
        XCTAssertEqual(largeResponse.status, 200, largeResponse.text)
        XCTAssertEqual(try decodeListBatch(largeResponse.object).newCount, 25_000)
        XCTAssertEqual(server.terminate(signal: false, timeout: 5), 0, "exit status; log:\n\(server.log)")
        XCTAssertThrowsError(try client.get("/healthz", timeout: 2), "connections after shutdown are refused")
    }

    /// The 503 of a server shutting down is readable by a page of an allowed origin too (it
    /// is answered before the request is admitted, and lacked the CORS headers).
    func testTheShutdownRefusalCarriesCrossOriginHeaders() throws {
        let server = try startServer(["--shutdown-grace", "10", "--cors-origin", "http://app.test"])
        let client = server.client
        let keepAlive = try client.connect()
        XCTAssertEqual(try keepAlive.request("GET", "/healthz").status, 200)
        // A request in flight keeps the server draining.
        let slow = try client.connect()
        let body = #"{"old": ["a"], "new": ["b"]}"#
        try slow.send("POST /diff HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n{")
        _ = waitForHeaders(client, bodyBytes: body.utf8.count, before: 0)
        server.sendTerm()
        waitForDraining(client)
        let refused = try keepAlive.request("GET", "/healthz", headers: ["Origin": "http://app.test"], timeout: 3)
        assertProblem(refused, 503, "shutting_down")
        XCTAssertEqual(refused.header("access-control-allow-origin"), "http://app.test")
        try slow.send(String(body.dropFirst()))
        XCTAssertEqual(try slow.readResponse(timeout: 5).status, 200)
        XCTAssertEqual(server.terminate(signal: false, timeout: 5), 0)
    }

    /// An idle server exits 0 at once on SIGTERM (and on SIGINT).
    func testIdleServerExitsZero() throws {
        let server = try startServer()
        XCTAssertEqual(try server.client.get("/healthz").status, 200)
        let started = Date()
        XCTAssertEqual(server.terminate(timeout: 5), 0, "exit status; log:\n\(server.log)")
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
        let other = try startServer()
        kill(other.pid, SIGINT)
        XCTAssertEqual(other.terminate(signal: false, timeout: 5), 0, "exit status after SIGINT")
    }

    /// The grace period bounds the wait for a request that never finishes.
    func testGraceBoundsAStuckRequest() throws {
        let server = try startServer(["--shutdown-grace", "1", "--connection-timeout", "30"])
        let stuck = try server.client.connect()
        try stuck.send("POST /diff HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
        _ = waitForHeaders(server.client, bodyBytes: 1000, before: 0)
        let started = Date()
        XCTAssertEqual(server.terminate(timeout: 6), 0, "exit status; log:\n\(server.log)")
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertGreaterThan(elapsed, 0.8, "did not wait for the request in flight")
        XCTAssertLessThan(elapsed, 4, "waited far past the 1 s grace")
    }
}
