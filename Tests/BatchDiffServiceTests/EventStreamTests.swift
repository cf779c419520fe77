import BatchDiffClient
import Foundation
import XCTest

/// `GET /feeds/{id}/changes` as server-sent events: one event per version, each applied by a
/// client model; heartbeats, `Last-Event-ID`, `gone`, formats, tokens, CORS, hang-ups,
/// shutdown, and a crowd of streams woken by one PUT.
final class EventStreamTests: ServerTestCase {
    private typealias Collection = FeedCollection<JSON, JSON>

    /// What a client holds after applying the event's `changes` answer to `held`.
    private func applied(_ event: ReceivedEvent, to held: Collection?) throws -> Collection {
        let changes = try JSONDecoder().decode(FeedChanges<JSON, JSON>.self, from: Data(event.data.utf8))
        XCTAssertEqual(event.id, String(changes.to), "the event's id is the version it leads to")
        return try changes.applied(to: held) { $0.identity() }
    }

    func testEveryVersionIsOneEventThatTakesTheClientToIt() throws {
        let server = try startServer(["--event-heartbeat", "30"])
        let client = server.client
        var generator = SnapshotGenerator(seed: 5)
        var snapshot: [Any] = generator.nextList(after: [])
        let first = assertVersion(try client.put("/feeds/live", jsonText(snapshot)))
        let stream = try EventStreamClient(client, "/feeds/live/changes?since=0")
        XCTAssertEqual(stream.head.status, 200)
        XCTAssertEqual(stream.head.header("content-type"), "text/event-stream; charset=utf-8")
        XCTAssertEqual(stream.head.header("cache-control"), "no-cache")
        XCTAssertEqual(stream.head.header("x-accel-buffering"), "no")
        var held = try applied(XCTUnwrap(stream.next()), to: nil)
        XCTAssertEqual(held, try collection(jsonText(snapshot)))
        XCTAssertEqual(stream.retry, 1000, "a browser is told how soon to reconnect")
        var version = first
        for _ in 0..<20 {
            snapshot = generator.nextList(after: snapshot)
            version = assertVersion(try client.put("/feeds/live", jsonText(snapshot)), version + 1)
            let event = try XCTUnwrap(stream.next())
            XCTAssertEqual(event.type, "message")
            XCTAssertEqual(int(event.object["from"]), version - 1, "each event starts at the previous event's version")
            held = try applied(event, to: held)
            XCTAssertEqual(held, try collection(jsonText(snapshot)), "after version \(version)")
        }
        XCTAssertTrue(stream.comments.isEmpty, "no heartbeat within 30 s: \(stream.comments)")
    }

    func testAQuietStreamSendsHeartbeats() throws {
        let server = try startServer(["--event-heartbeat", "1"])
        let client = server.client
        let version = assertVersion(try client.put("/feeds/quiet", "[1]"))
        let stream = try EventStreamClient(client, "/feeds/quiet/changes?since=\(version)")
        let started = Date()
        // No event comes; the comments arrive meanwhile.
        XCTAssertThrowsError(try stream.next(timeout: 2.6))
        XCTAssertGreaterThanOrEqual(stream.comments.count, 2, "a heartbeat a second: \(stream.comments)")
        XCTAssertLessThan(Date().timeIntervalSince(started), 4)
        assertVersion(try client.put("/feeds/quiet", "[1, 2]"), version + 1)
        let event = try XCTUnwrap(stream.next(timeout: 5))
        XCTAssertEqual(event.id, String(version + 1))
    }

    func testLastEventIDTakesPrecedenceOverSince() throws {
        let server = try startServer()
        let client = server.client
        let first = assertVersion(try client.put("/feeds/resume", "[1, 2]"))
        assertVersion(try client.put("/feeds/resume", "[2, 3]"), first + 1)
        let stream = try EventStreamClient(client, "/feeds/resume/changes?since=0", headers: ["Last-Event-ID": String(first)])
        let event = try XCTUnwrap(stream.next())
        XCTAssertEqual(int(event.object["from"]), first)
        XCTAssertEqual(try applied(event, to: collection("[1, 2]")), try collection("[2, 3]"))
        // Without since at all, Last-Event-ID is enough.
        let resumed = try EventStreamClient(client, "/feeds/resume/changes", headers: ["Last-Event-ID": String(first + 1)])
        XCTAssertEqual(resumed.head.status, 200)
        assertVersion(try client.put("/feeds/resume", "[3]"), first + 2)
        XCTAssertEqual(int(try XCTUnwrap(resumed.next()).object["from"]), first + 1)
    }

    func testAVersionNoLongerRetainedIsGoneAndTheStreamEnds() throws {
        let server = try startServer(["--max-versions", "2"])
        let client = server.client
        let first = assertVersion(try client.put("/feeds/old", "[1]"))
        for k in 2...4 { assertVersion(try client.put("/feeds/old", "[\(k)]"), first + k - 1) }
        let stream = try EventStreamClient(client, "/feeds/old/changes?since=\(first)")
        XCTAssertEqual(stream.head.status, 200)
        let gone = try XCTUnwrap(stream.next())
        XCTAssertEqual(gone.type, "gone")
        XCTAssertEqual(gone.id, "0", "a browser reconnecting starts again from the empty collection")
        XCTAssertEqual(int(gone.object["latest"]), first + 3)
        XCTAssertEqual(gone.object["code"] as? String, "version_gone")
        XCTAssertNil(try stream.next(), "the stream ends after gone")

        // A version of an earlier series (after DELETE and a new PUT) is gone too.
        let live = try EventStreamClient(client, "/feeds/old/changes?since=\(first + 3)")
        XCTAssertEqual(live.head.status, 200)
        XCTAssertEqual(try client.delete("/feeds/old").status, 204)
        let deleted = try XCTUnwrap(live.next())
        XCTAssertEqual(deleted.type, "problem")
        XCTAssertEqual(deleted.object["code"] as? String, "feed_not_found")
        XCTAssertNil(try live.next(), "the stream ends when its feed is deleted")
        let renewed = assertVersion(try client.put("/feeds/old", "[9]"))
        let stale = try EventStreamClient(client, "/feeds/old/changes?since=\(first + 3)")
        let staleEvent = try XCTUnwrap(stale.next())
        XCTAssertEqual(staleEvent.type, "gone")
        XCTAssertEqual(int(staleEvent.object["latest"]), renewed)
    }

    func testFormatsShapeTheEvents() throws {
        let server = try startServer()
        let client = server.client
        let first = assertVersion(try client.put("/feeds/shaped", #"[{"id": 1, "t": "a"}, {"id": 2, "t": "b"}]"#))
        let steps = try EventStreamClient(client, "/feeds/shaped/changes?since=\(first)&format=steps")
        let patch = try EventStreamClient(client, "/feeds/shaped/changes?since=\(first)&format=json-patch")
        assertVersion(try client.put("/feeds/shaped", #"[{"id": 2, "t": "b"}, {"id": 1, "t": "A"}]"#), first + 1)
        let stepsEvent = try XCTUnwrap(steps.next())
        XCTAssertEqual(stepsEvent.id, String(first + 1))
        XCTAssertNotNil(stepsEvent.object["steps"] as? [Any], stepsEvent.data)
        let patchEvent = try XCTUnwrap(patch.next())
        XCTAssertEqual(patchEvent.id, String(first + 1))
        let operations = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(patchEvent.data.utf8)) as? [[String: Any]], patchEvent.data)
        XCTAssertFalse(operations.isEmpty)
    }

    func testBadRequestsAreProblemsNotStreams() throws {
        let server = try startServer()
        let client = server.client
        assertVersion(try client.put("/feeds/f", "[1]"))
        let cases: [(path: String, headers: [String: String], status: Int, code: String)] = [
            ("/feeds/f/changes", [:], 400, "invalid_query"),
            ("/feeds/f/changes?since=-1", [:], 400, "invalid_query"),
            ("/feeds/f/changes?since=0&format=STEPS", [:], 400, "invalid_query"),
            ("/feeds/f/changes?since=0", ["Last-Event-ID": "x"], 400, "invalid_header"),
            ("/feeds/nothing/changes?since=0", [:], 404, "feed_not_found"),
            ("/feeds/nothing/changes", [:], 404, "feed_not_found"),
        ]
        for (path, headers, status, code) in cases {
            assertProblem(try client.get(path, headers: ["Accept": "text/event-stream"].merging(headers) { $1 }), status, code)
        }
        // A client that asks for JSON gets JSON, as before; the answer says it depends on Accept.
        let plain = try client.get("/feeds/f/changes?since=0", headers: ["Accept": "application/json"])
        XCTAssertEqual(plain.header("content-type"), "application/json")
        XCTAssertTrue(plain.headers.contains { $0.name.lowercased() == "vary" && $0.value.contains("Accept") }, "\(plain.headers)")
    }

    func testTheReadTokenMayComeAsAQueryParameterAndIsNeverLogged() throws {
        let server = try startServer(["--read-token", "secret-reader", "--write-token", "secret-writer", "--log-level", "info"])
        let client = server.client
        assertVersion(try client.put("/feeds/t", "[1]", headers: ["Authorization": "Bearer secret-writer"]))
        let stream = try EventStreamClient(client, "/feeds/t/changes?since=0&access_token=secret-reader")
        XCTAssertEqual(stream.head.status, 200)
        XCTAssertEqual(try XCTUnwrap(stream.next()).id.flatMap(Int.init).map { $0 > 0 }, true)
        XCTAssertEqual(try client.get("/feeds/t", headers: ["Authorization": "Bearer secret-writer"]).status, 200, "the write token reads too")
        assertProblem(try client.get("/feeds/t?access_token=secret-writer"), 403, "forbidden")  // but never from a URL
        assertProblem(try client.get("/feeds/t?access_token=wrong"), 403, "forbidden")
        assertProblem(try client.get("/feeds/t"), 401, "unauthorized")
        // Writes take the token from the header only.
        assertProblem(try client.delete("/feeds/t?access_token=secret-writer"), 401, "unauthorized")
        assertProblem(try client.put("/feeds/t?access_token=secret-writer", "[2]"), 401, "unauthorized")
        XCTAssertEqual(try client.get("/feeds/t").status, 401)
        _ = server.terminate()
        XCTAssertTrue(server.log.contains("GET /feeds/t/changes"), server.log)
        XCTAssertFalse(server.log.contains("secret"), "a token reached the log:\n\(server.log)")
    }

    func testCrossOriginPagesAreAllowedOnlyFromTheOriginsGiven() throws {
        let server = try startServer(["--cors-origin", "http://app.test, http://other.test"])
        let client = server.client
        let version = assertVersion(try client.put("/feeds/c", "[1]"))
        let allowed = try client.get("/feeds/c", headers: ["Origin": "http://app.test"])
        XCTAssertEqual(allowed.header("access-control-allow-origin"), "http://app.test")
        XCTAssertTrue(allowed.header("access-control-expose-headers")?.contains("ETag") == true)
        XCTAssertNil(try client.get("/feeds/c", headers: ["Origin": "http://evil.test"]).header("access-control-allow-origin"))
        let stream = try EventStreamClient(client, "/feeds/c/changes?since=\(version)", headers: ["Origin": "http://other.test"])
        XCTAssertEqual(stream.head.header("access-control-allow-origin"), "http://other.test")
        let refused = try client.request("PUT", "/feeds/c", body: Array("[".utf8), headers: ["Origin": "http://app.test"])
        XCTAssertEqual(refused.header("access-control-allow-origin"), "http://app.test", "a page can read its errors too")
        let preflight = try client.request("OPTIONS", "/feeds/c", headers: [
            "Origin": "http://app.test", "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "authorization, if-match",
        ])
        XCTAssertEqual(preflight.status, 204)
        XCTAssertEqual(preflight.header("access-control-allow-origin"), "http://app.test")
        XCTAssertTrue(preflight.header("access-control-allow-methods")?.contains("PUT") == true)
        XCTAssertTrue(preflight.header("access-control-allow-headers")?.contains("If-Match") == true)

        // Without --cors-origin no page of another origin may read anything.
        let plain = try startServer()
        XCTAssertNil(try plain.client.get("/healthz", headers: ["Origin": "http://app.test"]).header("access-control-allow-origin"))
    }

    func testStreamsWhoseClientsVanishAreFreedAndCountAsConnections() throws {
        let server = try startServer(["--max-connections", "40", "--event-heartbeat", "60"])
        let client = server.client
        let version = assertVersion(try client.put("/feeds/v", "[1]"))
        let streams = try (0..<30).map { _ in try EventStreamClient(client, "/feeds/v/changes?since=\(version)") }
        XCTAssertTrue(streams.allSatisfy { $0.head.status == 200 })
        // Thirty streams and ten more connections fill the server: more are refused at once
        // (but for health checks). Each of the ten is served once, so it holds a slot within
        // the limit: one let in for health checks alone (the server had not yet seen an
        // earlier connection close) answers 503 and is replaced.
        var others: [HTTPConnection] = []
        for index in 0..<10 {
            XCTAssertTrue(eventually(timeout: 5) {
                guard let connection = try? client.connect() else { return false }
                guard (try? connection.request("GET", "/feeds/v", timeout: 1).status) == 200 else {
                    connection.close()
                    return false
                }
                others.append(connection)
                return true
            }, "connection \(index) of 10")
        }
        XCTAssertTrue(eventually(timeout: 5) { (try? client.get("/feeds/v", timeout: 1))?.status != 200 }, "a 41st connection is refused")
        others.forEach { $0.close() }
        XCTAssertTrue(eventually(timeout: 5) { (try? client.metric("batchdiff_event_streams", timeout: 1)) == 30 })
        XCTAssertEqual(try client.metric("batchdiff_connections_parked"), 0, "a stream is not also a parked request")
        // Clients gone (a reset, as a phone losing its network) free their streams long
        // before the next heartbeat, 60 s away.
        for stream in streams { stream.connection.reset() }
        XCTAssertTrue(eventually(timeout: 3) { (try? client.metric("batchdiff_event_streams", timeout: 1)) == 0 }, "streams of vanished clients are freed")
        let fresh = try (0..<30).map { _ in try EventStreamClient(client, "/feeds/v/changes?since=\(version)") }
        assertVersion(try client.put("/feeds/v", "[1, 2]"), version + 1)
        for stream in fresh { XCTAssertEqual(try stream.next()?.id, String(version + 1)) }
    }

    /// Event streams in every connection slot leave the health checks answered, on the
    /// connections let in past the limit for them alone; no stream is closed for them.
    /// (Eight streams made /healthz unreachable, and an orchestrator restarted the server.)
    func testHealthChecksAreAnsweredWhenStreamsTakeEverySlot() throws {
        let server = try startServer(["--max-connections", "8", "--event-heartbeat", "60"])
        let client = server.client
        let version = assertVersion(try client.put("/feeds/h", "[1]"))
        var streams = try (0..<8).map { _ in try EventStreamClient(client, "/feeds/h/changes?since=\(version)") }
        XCTAssertTrue(streams.allSatisfy { $0.head.status == 200 })
        for round in 0..<3 {
            for path in ["/healthz", "/readyz"] {
                let started = Date()
                XCTAssertEqual(try client.get(path, timeout: 2).status, 200, "round \(round): \(path)")
                XCTAssertLessThan(Date().timeIntervalSince(started), 2)
            }
        }
        XCTAssertNotEqual(try? client.get("/feeds/h", timeout: 2).status, 200, "past the limit, a health check alone is answered")
        // Every stream is still open: with one closed, a new version reaches the seven others.
        streams.removeLast().connection.close()
        XCTAssertTrue(eventually(timeout: 5) { (try? client.put("/feeds/h", "[1, 2]").status) == 200 }, "a slot frees up for the write")
        for stream in streams { XCTAssertEqual(try stream.next()?.id, String(version + 1)) }
    }

    /// A pretty-printed snapshot is stored compact, so its events are one line, framed once
    /// and shared by every stream: 1,000 stalled streams of a 4 MB feed from version 0 hold
    /// little more memory than the feed itself, a new version's event included. (With the
    /// item text kept as sent, each stream framed its own copy of every line: 20 stalled
    /// streams held 133 MB.)
    func testStalledStreamsOfAPrettyPrintedFeedShareTheirEvents() throws {
        let server = try startServer(["--event-heartbeat", "60"])
        let client = server.client
        let rows = (0..<45_000).map { "  {\n    \"id\": \($0),\n    \"title\": \"Row \($0) of a pretty feed\",\n    \"tags\": [ \"a b\", \"c\" ]\n  }" }
        let pretty = "[\n" + rows.joined(separator: ",\n") + "\n]\n"
        XCTAssertGreaterThan(pretty.utf8.count, 4 << 20)
        let version = assertVersion(try client.request("PUT", "/feeds/pretty", body: Array(pretty.utf8), timeout: 60))
        // Stored compact, the content unchanged.
        let stored = try client.get("/feeds/pretty", timeout: 30)
        XCTAssertFalse(stored.body.contains(UInt8(ascii: "\n")), "no line breaks kept")
        XCTAssertFalse(stored.text.contains(#""id": "#), "no spaces between tokens kept")
        XCTAssertTrue(stored.text.contains(#""tags":["a b","c"]"#), "strings as they were")
        XCTAssertEqual(canonicalJSON(assertJSON(stored)["data"]!), canonicalJSON(try JSONSerialization.jsonObject(with: Data(pretty.utf8))))
        // The answer from version 0 is made once, before the streams open.
        XCTAssertEqual(try client.get("/feeds/pretty/changes?since=0", timeout: 30).status, 200)
        let before = try server.residentBytes()
        var streams: [HTTPConnection] = []
        for _ in 0..<1000 {
            let connection = try client.connect(receiveBuffer: 4096)
            try connection.send(HTTPClient.requestBytes("GET", "/feeds/pretty/changes?since=0", body: nil, headers: ["Accept": "text/event-stream"]))
            streams.append(connection)
        }
        XCTAssertTrue(eventually(timeout: 30) { (try? client.metric("batchdiff_event_streams")) == 1000 }, "1,000 streams open")
        let next = pretty.replacingOccurrences(of: "Row 7 of", with: "Row seven of")
        let started = Date()
        assertVersion(try client.request("PUT", "/feeds/pretty", body: Array(next.utf8), timeout: 60), version + 1)
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "the write is not held up by the streams")
        Thread.sleep(forTimeInterval: 2)
        let grown = try server.residentBytes() - before
        XCTAssertLessThan(grown, 64 << 20, "1,000 stalled streams grew the server by \(grown >> 20) MB")
        // They are stalled, not broken: one of them reads both events.
        let reader = try EventStreamClient(client, "/feeds/pretty/changes?since=0")
        XCTAssertEqual(try reader.next(timeout: 30)?.id, String(version + 1))
        streams.forEach { $0.close() }
    }

    func testShutdownEndsStreamsCleanly() throws {
        let server = try startServer(["--shutdown-grace", "8", "--event-heartbeat", "60"])
        let client = server.client
        let version = assertVersion(try client.put("/feeds/s", "[1]"))
        let stream = try EventStreamClient(client, "/feeds/s/changes?since=\(version)")
        XCTAssertEqual(stream.head.status, 200)
        let started = Date()
        server.sendTerm()
        XCTAssertEqual(try stream.readToEnd(timeout: 5).count, 0, "the stream ends with its last chunk, no event")
        XCTAssertEqual(server.waitForExit(timeout: 5), 0)
        XCTAssertLessThan(Date().timeIntervalSince(started), 3, "a stream does not hold shutdown for the grace period")
    }

    /// A thousand streams on one feed all receive the event within a second of the PUT's
    /// answer (`make bench-fanout` measures ten thousand beside as many long polls).
    func testAThousandStreamsReceiveOnePut() throws {
        let server = try startServer(["--event-heartbeat", "60"])
        let client = server.client
        let version = assertVersion(try client.put("/feeds/crowd", "[1]"))
        let streams = try (0..<1000).map { _ in try EventStreamClient(client, "/feeds/crowd/changes?since=\(version)") }
        XCTAssertTrue(eventually(timeout: 10) { (try? client.metric("batchdiff_event_streams", timeout: 2)) == 1000 })
        assertVersion(try client.put("/feeds/crowd", "[1, 2]"), version + 1)
        let acknowledged = Date()
        var last = acknowledged
        for stream in streams {
            XCTAssertEqual(try stream.next(timeout: 10)?.id, String(version + 1))
            last = Date()
        }
        print("1000 streams: the last event was read \(Int(last.timeIntervalSince(acknowledged) * 1000)) ms after the PUT's answer")
        XCTAssertLessThan(last.timeIntervalSince(acknowledged), 1)
    }
}
