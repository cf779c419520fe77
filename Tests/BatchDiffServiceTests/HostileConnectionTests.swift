import Foundation
import XCTest

/// Clients that stall or hog connections must not stop the server serving others.
final class HostileConnectionTests: ServerTestCase {
    /// A client that sends half its headers and stalls is disconnected after the idle
    /// timeout; other clients are served meanwhile.
    func testStalledHeadersAreDisconnectedAfterTheTimeoutWhileOthersAreServed() throws {
        let server = try startServer(["--connection-timeout", "2"])
        let client = server.client
        let stalled = try client.connect()
        let started = Date()
        try stalled.send("POST /diff HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty")
        let slow = try client.connect()
        try slow.send("GET /heal")  // a request line cut short, byte by byte below
        for byte in "thz HTTP/1.1\r\nHost: x\r\n".utf8 {
            try slow.send([byte])
            usleep(20_000)
        }
        // Others are served while both are open.
        for index in 0..<20 {
            let response = try client.post("/diff", #"{"old": [\#(index)], "new": [\#(index), "x"]}"#, headers: [:])
            XCTAssertEqual(response.status, 200, response.text)
        }
        // The slow but live client finishes its request and is answered.
        try slow.send("\r\n")
        XCTAssertEqual(try slow.readResponse(timeout: 5).status, 200)
        // The stalled one is closed after about two seconds, without an answer.
        XCTAssertTrue(stalled.waitForClose(timeout: 6), "not closed within 6 s of a 2 s idle timeout")
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertGreaterThan(elapsed, 1.5, "closed before the idle timeout")
        XCTAssertLessThan(elapsed, 6, "closed too late")
        XCTAssertEqual(try client.get("/healthz").status, 200)
    }

    /// A client that trickles its headers a byte at a time, never idle long enough for the
    /// idle timeout, is closed at the header deadline; a request sent in time is served.
    func testHeadersTrickledByteByByteAreCutOffAtTheHeaderDeadline() throws {
        let server = try startServer(["--connection-timeout", "30", "--header-timeout", "2"])
        let client = server.client
        let trickle = try client.connect()
        let started = Date()
        var closed = false
        for byte in Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ".utf8) + Array(repeating: UInt8(ascii: "a"), count: 200) {
            guard (try? trickle.send([byte])) != nil, !trickle.waitForClose(timeout: 0.2) else {
                closed = true
                break
            }
            if Date().timeIntervalSince(started) > 8 { break }
        }
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertTrue(closed, "a connection trickling its headers was not closed in 8 s")
        XCTAssertGreaterThan(elapsed, 1.5, "closed before the header deadline")
        XCTAssertLessThan(elapsed, 4.5, "closed long after the 2 s header deadline")
        // A keep-alive connection that sends its next request in time is served on.
        let keepAlive = try client.connect()
        for _ in 0..<3 {
            XCTAssertEqual(try keepAlive.request("GET", "/healthz").status, 200)
            usleep(500_000)
        }
        XCTAssertEqual(try client.get("/healthz").status, 200)
    }

    /// A client that sends its body one byte at a time keeps its connection as long as
    /// bytes keep coming, and is answered.
    func testSlowBodyWithinTheTimeoutIsServed() throws {
        let server = try startServer(["--connection-timeout", "2"])
        let connection = try server.client.connect()
        let body = #"{"old": [1, 2, 3], "new": [3, 1]}"#
        try connection.send("POST /diff HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n")
        for byte in body.utf8 {
            try connection.send([byte])
            usleep(30_000)  // about a second in all: longer than nothing, shorter than the timeout per gap
        }
        let response = try connection.readResponse(timeout: 5)
        XCTAssertEqual(response.status, 200, response.text)
        XCTAssertEqual(try decodeListBatch(response.object).oldCount, 3)
    }

    /// A client that trickles its body, a byte a second (never idle long enough for the
    /// connection timeout), is cut off at the body deadline, and everyone else is served.
    func testBodyTrickledPastTheBodyTimeoutIsCutOff() throws {
        let server = try startServer(["--body-timeout", "2", "--connection-timeout", "30"])
        let connection = try server.client.connect()
        try connection.send("POST /diff HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n")
        let started = Date()
        var cutOff = false
        for _ in 0..<10 where !cutOff {
            do {
                try connection.send("[")
                cutOff = connection.waitForClose(timeout: 1)
            } catch {
                cutOff = true  // the server shut the socket: the write failed
            }
        }
        let seconds = Date().timeIntervalSince(started)
        XCTAssertTrue(cutOff, "a body trickled for 10 s was not cut off by --body-timeout 2")
        XCTAssertLessThan(seconds, 6, "cut off after \(seconds) s")
        XCTAssertEqual(try server.client.get("/healthz").status, 200)
    }

    /// With `--max-connections 8` and 8 idle connections held, an extra connection is
    /// refused, closed unanswered or answered 503 for anything but a health check; three
    /// more are let in for `/healthz` and `/readyz` alone, and the one after those is
    /// refused or closed. Once the idle ones close, the server serves again.
    func testConnectionLimitRefusesExtraConnectionsAndRecovers() throws {
        let server = try startServer(["--max-connections", "8", "--connection-timeout", "30"])
        let client = server.client
        // Eight keep-alive connections, each served once (so the server holds them), then idle.
        var idle: [HTTPConnection] = []
        for index in 0..<8 {
            let connection = try client.connect()
            XCTAssertEqual(try connection.request("GET", "/healthz", timeout: 3).status, 200, "connection \(index) of 8")
            idle.append(connection)
        }
        // What an extra connection asking for `path` gets: the kernel may complete the
        // handshake, but the server must not leave it hanging.
        func extra(_ path: String) -> (String, HTTPConnection?) {
            guard let extra = try? client.connect(timeout: 2) else { return ("refused", nil) }
            try? extra.send("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
            do {
                return ("served \(try extra.readResponse(timeout: 2).status)", extra)
            } catch let error as HTTPClientError {
                return (error.description == "timed out waiting for the server" ? "left hanging" : "closed", nil)
            } catch {
                return ("closed", nil)
            }
        }
        let (outcome, _) = extra("/metrics")
        XCTAssertTrue(["refused", "closed", "served 503"].contains(outcome), "a 9th connection past --max-connections 8 asking for /metrics was \(outcome)")
        // That connection holds a probe slot until the server has seen it close.
        Thread.sleep(forTimeInterval: 0.5)
        // Health checks get in: three connections, held open.
        let probes = ["/healthz", "/readyz", "/healthz"].map { extra($0) }
        XCTAssertEqual(probes.map(\.0), ["served 200", "served 200", "served 200"])
        let (beyond, _) = extra("/healthz")
        XCTAssertTrue(["refused", "closed"].contains(beyond), "a 4th health check past the limit was \(beyond)")
        probes.forEach { $0.1?.close() }
        // The idle connections were not disturbed and are still served.
        for (index, connection) in idle.enumerated() {
            XCTAssertEqual(try? connection.request("GET", "/healthz", timeout: 3).status, 200, "held connection \(index)")
        }
        idle.forEach { $0.close() }
        idle = []
        XCTAssertTrue(eventually(timeout: 3) { (try? client.get("/healthz", timeout: 1).status) == 200 },
                      "the server does not serve again after the idle connections closed")
        // And it takes a full set of eight again, once it has seen the old ones close (a
        // connection counts until the server notices its end, a moment after the client's).
        for index in 0..<8 {
            XCTAssertTrue(eventually(timeout: 3) {
                guard let connection = try? client.connect(), (try? connection.request("GET", "/healthz", timeout: 1).status) == 200 else {
                    return false
                }
                idle.append(connection)
                return true
            }, "connection \(index) of 8, again")
        }
    }

    /// Garbage instead of HTTP is answered with a 4xx or closed; the server serves on.
    func testGarbageRequestsDoNotHurtTheServer() throws {
        let server = try startServer(["--connection-timeout", "2"])
        let client = server.client
        let garbage: [[UInt8]] = [
            Array("\u{0}\u{1}\u{2}\u{3}\r\n\r\n".utf8),
            Array("GET\r\n\r\n".utf8),
            Array("GET / HTTP/9.9\r\n\r\n".utf8),
            Array("POST /diff HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n".utf8),
            Array("POST /diff HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n".utf8),
            Array("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 40_000))\r\n\r\n".utf8),
            Array("POST /diff HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".utf8),
        ]
        for (index, bytes) in garbage.enumerated() {
            let connection = try client.connect()
            try? connection.send(bytes)
            if let response = try? connection.readResponse(timeout: 3) {
                XCTAssertTrue((400..<600).contains(response.status) && response.status != 500,
                              "garbage \(index) answered \(response.status): \(response.text)")
            }
            XCTAssertEqual(try client.get("/healthz").status, 200, "after garbage \(index)")
        }
    }
}
