import Foundation
import Glibc
import TestSupport
import XCTest

/// `--store postgres://...`: servers sharing one database (a throwaway cluster each test
/// starts, ``PostgresCluster``) answer every feed alike, wake each other's long polls,
/// keep `If-Match` across servers, survive `kill -9`, and answer 503 `store_unavailable`
/// within 5 s while the database is down or frozen, then come back by themselves
/// (docs/feeds.md §11).
final class PostgresStoreTests: ServerTestCase {
    private var cluster: PostgresCluster!

    override func setUpWithError() throws {
        cluster = try PostgresCluster()
    }

    override func tearDown() {
        super.tearDown()
        cluster = nil
    }

    private func startServers(_ count: Int, _ arguments: [String] = []) throws -> [ServerProcess] {
        let servers = try (0..<count).map { _ in try startServer(["--store", cluster.uri] + arguments) }
        for server in servers {
            XCTAssertTrue(eventually(timeout: 10) { (try? server.client.get("/readyz").status) == 200 }, "the server did not get ready")
        }
        return servers
    }

    /// The order stays with the feed in the database: the other server writes it sorted.
    func testASortedFeedKeepsItsOrderOnEveryServer() throws {
        let servers = try startServers(2)
        try assertSortedFeedKeepsItsOrder(servers[0].client, reopened: { servers[1].client }, feed: "leaderboard")
    }

    func testServersShareFeedsAndWakeEachOthersLongPolls() throws {
        let servers = try startServers(2)
        let (a, b) = (servers[0].client, servers[1].client)
        var generator = SnapshotGenerator(seed: 5)
        var list: [Any] = []
        var sectioned: [String: Any] = ["sections": []]
        for _ in 0..<3 {
            list = generator.nextList(after: list)
            sectioned = generator.nextSectioned(after: sectioned)
            assertVersion(try a.put("/feeds/list", jsonText(list)))
            assertVersion(try b.put("/feeds/sections", jsonText(sectioned)))
            XCTAssertEqual(try b.get("/feeds/list").text, try a.get("/feeds/list").text, "a write on one server is read on the other at once")
            XCTAssertEqual(try a.get("/feeds/sections").text, try b.get("/feeds/sections").text)
        }
        XCTAssertEqual(try a.get("/feeds").text, try b.get("/feeds").text)

        // A long poll parked on one server, woken by a write on the other.
        var delays: [Double] = []
        for round in 0..<5 {
            let latest = try XCTUnwrap(int(assertJSON(try b.get("/feeds/list"))["version"]))
            let woken = Collector<(Date, Int)>()
            let poll = Thread {
                let response = try? b.get("/feeds/list/changes?since=\(latest)&wait=10", timeout: 15)
                woken.append((Date(), response.flatMap { int($0.object["to"]) } ?? -1))
            }
            poll.start()
            XCTAssertTrue(eventually(timeout: 5) { (try? servers[1].client.metric("batchdiff_long_polls_parked")) == 1 }, "round \(round): not parked")
            list = generator.nextList(after: list)
            let version = assertVersion(try a.put("/feeds/list", jsonText(list)))
            let acknowledged = Date()
            XCTAssertTrue(eventually(timeout: 5) { woken.all.count == 1 }, "round \(round): the long poll was not woken")
            let (at, to) = try XCTUnwrap(woken.all.first)
            XCTAssertEqual(to, version, "round \(round): the long poll's answer")
            delays.append(at.timeIntervalSince(acknowledged))
        }
        // Within 100 ms of the other server's acknowledgement (the median of five, so that one
        // slow round on a busy two-core machine is not a failure; none may be slow).
        XCTAssertLessThan(delays.sorted()[2], 0.1, "woken after \(delays) s")
        XCTAssertLessThan(delays.max() ?? 0, 0.5, "woken after \(delays) s")

        XCTAssertEqual(try b.delete("/feeds/list").status, 204)
        assertProblem(try a.get("/feeds/list"), 404, "feed_not_found")

        // A feed's uniqueIdentities is kept in the database: the other server holds writes to it.
        assertVersion(try a.put("/feeds/unique?uniqueIdentities=true", "[1, 2]"))
        assertProblem(try b.put("/feeds/unique", "[1, 2, 1]"), 422, "duplicate_identity")
        assertProblem(try b.put("/feeds/unique?uniqueIdentities=false", "[1]"), 422, "invalid_shape")
    }

    /// A write wakes the long polls and event streams parked on its feed with the version it
    /// made: a woken client reads nothing from the database. 400 long polls and 50 streams
    /// through a pool of four connections are each answered with the new version, twice,
    /// and the database serves a handful of calls meanwhile (each woken client used to read
    /// the feed again: hundreds of calls queued for four connections, and 503s).
    func testParkedClientsAreWokenWithoutReadingTheDatabase() throws {
        let server = try startServers(1)[0]
        let client = server.client
        let rows = (0..<2000).map { "{\"id\": \($0), \"score\": \($0 * 7 % 1000), \"name\": \"player \($0)\"}" }
        var version = assertVersion(try client.put("/feeds/popular", "[" + rows.joined(separator: ",") + "]"))
        let streams = try (0..<50).map { _ in try EventStreamClient(client, "/feeds/popular/changes?since=\(version)") }
        for round in 1...2 {
            let request = HTTPClient.requestBytes("GET", "/feeds/popular/changes?since=\(version)&wait=30", body: nil, headers: [:])
            let polls = try (0..<400).map { _ in
                let connection = try client.connect()
                try connection.send(request)
                return connection
            }
            XCTAssertTrue(eventually(timeout: 20) { (try? client.metric("batchdiff_long_polls_parked")) == 450 }, "round \(round): not all parked")
            // A long poll counts as parked before its first read of the feed is answered.
            var callsBefore = try storeCalls(client)
            XCTAssertTrue(eventually(timeout: 20) {
                usleep(200_000)
                let calls = (try? self.storeCalls(client)) ?? -1
                defer { callsBefore = calls }
                return calls == callsBefore
            }, "round \(round): the first reads did not end")
            let changed = rows.enumerated().map { $0.offset == round ? "{\"id\": \(round), \"score\": \(5000 + round)}" : $0.element }
            version = assertVersion(try client.put("/feeds/popular", "[" + changed.joined(separator: ",") + "]"), version + 1)
            for (index, connection) in polls.enumerated() {
                let response = try connection.readResponse(timeout: 10)
                XCTAssertEqual(response.status, 200, "round \(round), long poll \(index): \(response.text.prefix(200))")
                XCTAssertEqual(int(response.object["to"]), version, "round \(round), long poll \(index)")
            }
            for (index, stream) in streams.enumerated() {
                let event = try stream.next(timeout: 10)
                XCTAssertEqual(event?.id, String(version), "round \(round), stream \(index): \(event?.data.prefix(200) ?? "ended")")
            }
            // The write's own calls, and the listener's count, are a few.
            let calls = try storeCalls(client) - callsBefore
            XCTAssertLessThanOrEqual(calls, 20, "round \(round): \(calls) store calls while 450 clients were woken")
        }
    }

    /// Calls the server made to its PostgreSQL store so far.
    private func storeCalls(_ client: HTTPClient) throws -> Int {
        let line = try client.get("/metrics").text.split(separator: "\n").first { $0.hasPrefix("batchdiff_store_call_seconds_count{") }
        return try XCTUnwrap(line.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) }, "no batchdiff_store_call_seconds_count")
    }

    /// `If-None-Match: *` creates only, over the database as in memory; eight sign-ups of
    /// one feed at once over both servers: one creates it, the others get 412 and change
    /// nothing (the check and the write are one step).
    func testCreateOnlyWritesOverBothServers() throws {
        let servers = try startServers(2)
        let clients = servers.map(\.client)
        try assertCreateOnlyWrites(clients[1], feed: "signup")
        for round in 0..<3 {
            let statuses = Collector<(writer: Int, status: Int)>()
            let finished = runConcurrently(8, timeout: 30) { writer in
                let put = try? clients[writer % 2].put("/feeds/race-\(round)", "[\(writer)]", headers: ["If-None-Match": "*"])
                statuses.append((writer, put?.status ?? 0))
            }
            XCTAssertTrue(finished, "round \(round): the writers did not finish")
            let created = statuses.all.filter { $0.status == 200 }
            XCTAssertEqual(created.count, 1, "round \(round): \(statuses.all)")
            XCTAssertEqual(statuses.all.filter { $0.status == 412 }.count, 7, "round \(round): \(statuses.all)")
            let winner = try XCTUnwrap(created.first).writer
            for client in clients {
                XCTAssertEqual(assertJSON(try client.get("/feeds/race-\(round)"))["data"].map(canonicalJSON), "[\(winner)]")
            }
        }
    }

    /// Eight writers over both servers, each reading as an HTTP library does (asking for
    /// gzip) and writing back with `If-Match` set to the ETag it received: every write
    /// is acknowledged once nobody wrote in between, and none is lost. With weak tags on
    /// compressed answers this livelocked (34 writes in 60 s, 32,482 answered 412).
    func testWritersWithIfMatchOverBothServersLoseNothing() throws {
        let servers = try startServers(2)
        let clients = servers.map(\.client)
        assertVersion(try clients[0].put("/feeds/shared", "[]"))
        let acknowledged = Collector<String>()
        let unexpected = Collector<String>()
        let started = Date()
        let finished = runConcurrently(8, timeout: 60) { writer in
            var attempt = 0
            for item in 0..<8 {
                while true {
                    attempt += 1
                    let client = clients[(writer + attempt) % 2]
                    guard let latest = try? client.get("/feeds/shared", headers: ["Accept-Encoding": "gzip"]), latest.status == 200,
                          let tag = latest.header("etag"), let body = try? latest.inflatedBody(),
                          let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any], var data = object["data"] as? [Any] else {
                        return unexpected.append("writer \(writer): could not read the feed")
                    }
                    data.append(["id": "w\(writer)-\(item)", "text": String(repeating: "padding ", count: 4)])
                    guard let put = try? client.put("/feeds/shared", jsonText(data), headers: ["If-Match": tag]) else {
                        return unexpected.append("writer \(writer): the PUT failed")
                    }
                    if put.status == 200 {
                        acknowledged.append("w\(writer)-\(item)")
                        break
                    }
                    guard put.status == 412 else { return unexpected.append("writer \(writer): PUT \(put.status) \(put.text)") }
                }
            }
        }
        XCTAssertTrue(finished, "the writers did not finish within 60 s")
        XCTAssertLessThan(Date().timeIntervalSince(started), 60)
        XCTAssertEqual(unexpected.all, [])
        let final = assertJSON(try servers[1].client.get("/feeds/shared"))
        let ids = (final["data"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        XCTAssertEqual(ids.count, 64)
        XCTAssertEqual(Set(ids), Set(acknowledged.all), "every acknowledged write is in the feed, and nothing else")
    }

    /// Patches through both servers match the model and read as whole writes do; eight
    /// clients sending one `Idempotency-Key` at once over both servers make one version and
    /// all get its answer.
    func testPatchesAndIdempotencyKeysOverBothServers() throws {
        let servers = try startServers(2, ["--max-versions", "30"])
        try randomPatchHistory(servers[0].client, sectioned: false, patches: 60, seed: 0x9A7C_0005)
        try randomPatchHistory(servers[1].client, sectioned: true, patches: 60, seed: 0x9A7C_0006)
        let first = assertVersion(try servers[0].client.put("/feeds/keyed", "[1, 2, 3]"))
        let answers = Collector<String>()
        let body = Array(#"{"ops": [{"op": "move", "id": 1, "at": "end"}]}"#.utf8)
        let clients = servers.map(\.client)
        XCTAssertTrue(runConcurrently(8) { client in
            let response = try? clients[client % 2].request("PATCH", "/feeds/keyed", body: body, headers: ["Idempotency-Key": "shared"])
            answers.append(response.map { "\($0.status) \($0.text)" } ?? "no answer")
        })
        XCTAssertEqual(Set(answers.all).count, 1, "\(answers.all)")
        XCTAssertTrue(answers.all.first?.hasPrefix("200 ") ?? false, "\(answers.all)")
        for server in servers { assertVersion(try server.client.get("/feeds/keyed"), first + 1) }
    }

    /// 200 rows, 60 versions changing a few rows or many, written on one server and read on
    /// the other after each (which brings the version it keeps forward by the changes the
    /// first wrote): the database keeps most versions as changes, some whole, and every
    /// retained version's `changes` leads to the latest.
    func testVersionsKeptAsChangesAreReadOnEveryServer() throws {
        let servers = try startServers(2, ["--max-versions", "25"])
        let (writer, reader) = (servers[0].client, servers[1].client)
        var rows: [[String: Any]] = (0..<200).map { ["id": $0, "title": "row \($0)", "v": 0] }
        var written: [(version: Int, rows: [[String: Any]])] = []
        var generator = SplitMix64(state: 60)
        for step in 0..<60 {
            for _ in 0..<(step % 10 == 9 ? 80 : 1 + step % 3) { rows[generator.below(rows.count)]["v"] = step + 1 }
            if step % 7 == 3 { rows.insert(rows.removeLast(), at: 0) }
            written.append((assertVersion(try writer.put("/feeds/chain", jsonText(rows))), rows))
            let read = assertJSON(try reader.get("/feeds/chain"))
            XCTAssertEqual(int(read["version"]), written.last?.version)
            XCTAssertEqual(read["data"].map(canonicalJSON), canonicalJSON(rows), "step \(step)")
        }
        // Windows from every retained version, on the server that did not write them: seen
        // through the batches kept with the versions since, never a diff of whole versions.
        for held in written.suffix(24).dropLast() {
            let answer = assertJSON(try reader.get("/feeds/chain/changes?since=\(held.version)&offset=60&limit=20"))
            let slice = { (rows: [[String: Any]]) in Array(rows.dropFirst(60).prefix(20)) }
            let batch = try decodeListBatch(answer)
            XCTAssertEqual(try batch.apply(to: listElements(slice(held.rows)), values: decodeListValues(answer)), listElements(slice(rows)), "window since \(held.version)")
        }
        XCTAssertEqual(try metric(reader, #"batchdiff_feed_window_batches_total{through="versions"}"#), 23)
        XCTAssertEqual(try metric(reader, #"batchdiff_feed_window_batches_total{through="whole"}"#), 0)
        for held in written.suffix(25) {
            let answer = assertJSON(try reader.get("/feeds/chain/changes?since=\(held.version)"))
            let batch = try decodeListBatch(answer)
            XCTAssertEqual(try batch.apply(to: listElements(held.rows), values: decodeListValues(answer)), listElements(rows), "since \(held.version)")
        }
        assertVersionGone(try reader.get("/feeds/chain/changes?since=\(written[30].version)"), latest: written.last!.version)
        let kinds = try cluster.query("SELECT delta, count(*) FROM batchdiff_versions WHERE feed = 'chain' GROUP BY delta ORDER BY delta")
        let counts = Dictionary(kinds.split(separator: "\n").compactMap { line -> (Int, Int)? in
            let fields = line.split(separator: "|").compactMap { Int($0) }
            return fields.count == 2 ? (fields[0], fields[1]) : nil
        }) { $0 + $1 }
        XCTAssertGreaterThan(counts[1] ?? 0, 15, "most versions are kept as changes: \(kinds)")
        XCTAssertGreaterThan(counts[0] ?? 0, 0, "whole versions now and then: \(kinds)")
    }

    /// A database of schema version 2 (as the servers before PATCH and versions kept as
    /// changes left it, every version whole) is brought forward by the first server that
    /// connects, and its feeds keep answering.
    func testADatabaseOfAnEarlierSchemaIsBroughtForward() throws {
        _ = try cluster.query("""
            CREATE TABLE batchdiff_schema (version integer NOT NULL);
            INSERT INTO batchdiff_schema VALUES (2);
            CREATE TABLE batchdiff_feeds (id text COLLATE "C" PRIMARY KEY, id_key text NOT NULL, latest bigint NOT NULL,
                unique_identities integer NOT NULL DEFAULT 0);
            CREATE TABLE batchdiff_versions (feed text COLLATE "C" NOT NULL REFERENCES batchdiff_feeds (id) ON DELETE CASCADE,
                version bigint NOT NULL, body bytea NOT NULL, PRIMARY KEY (feed, version));
            INSERT INTO batchdiff_feeds VALUES ('old', 'id', 41, 0);
            INSERT INTO batchdiff_versions VALUES ('old', 40, convert_to('[{"id":1},{"id":2}]', 'UTF8')),
                ('old', 41, convert_to('[{"id":2},{"id":3}]', 'UTF8'));
            """)
        let client = try startServers(1)[0].client
        let answer = assertJSON(try client.get("/feeds/old/changes?since=40"))
        XCTAssertEqual(int(answer["to"]), 41)
        XCTAssertEqual(canonicalJSON(answer["values"] ?? [:]), canonicalJSON(parseJSON(#"{"rows": {"inserted": [{"id": 3}], "reloaded": []}}"#)))
        assertVersion(try client.request("PATCH", "/feeds/old", body: Array(#"{"ops": [{"op": "remove", "id": 2}]}"#.utf8)), 42)
        XCTAssertEqual(assertJSON(try client.get("/feeds/old"))["data"].map(canonicalJSON), canonicalJSON(parseJSON(#"[{"id": 3}]"#)))
        // A window from a version written before batches were kept: seen through a diff.
        let window = assertJSON(try client.get("/feeds/old/changes?since=40&offset=0&limit=1"))
        XCTAssertEqual(canonicalJSON(window["values"] ?? [:]), canonicalJSON(parseJSON(#"{"rows": {"inserted": [{"id": 3}], "reloaded": []}}"#)))
        XCTAssertEqual(try metric(client, #"batchdiff_feed_window_batches_total{through="whole"}"#), 1)
        XCTAssertEqual(try cluster.query("SELECT version FROM batchdiff_schema").trimmingCharacters(in: .whitespacesAndNewlines), "6")
    }

    func testAcknowledgedWritesSurviveKillDashNineOfOneServerAndBothRestarts() throws {
        let servers = try startServers(2)
        let acknowledged = AcknowledgedWrites()
        let unexpected = Collector<String>()
        let writers = acknowledged.startWriters(4, rounds: 120, clients: servers.map(\.client), unexpected: unexpected)
        XCTAssertTrue(eventually(timeout: 30) { acknowledged.count >= 20 }, "the writers did not get going")
        kill(servers[0].pid, SIGKILL)
        XCTAssertNotNil(servers[0].waitForExit(timeout: 10))
        let countAtKill = acknowledged.count
        XCTAssertTrue(eventually(timeout: 30) { acknowledged.count >= countAtKill + 20 }, "the other server stopped taking writes")
        XCTAssertTrue(eventually(timeout: 120) { !writers.isExecuting }, "the writers did not end")

        XCTAssertEqual(unexpected.all, [])
        // Both restarted: the killed one, and the other after a clean stop.
        XCTAssertEqual(servers[1].terminate(), 0)
        let restarted = try startServers(2)
        XCTAssertEqual(acknowledged.last.count, 4, "every writer had a write acknowledged")
        for (feed, last) in acknowledged.last {
            for client in restarted.map(\.client) {
                let latest = assertJSON(try client.get("/feeds/\(feed)"))
                XCTAssertEqual(int(latest["version"]), last.version, "\(feed): the last acknowledged version")
                XCTAssertEqual(latest["data"].map(canonicalJSON), last.content, "\(feed): the acknowledged content")
                let rebuilt = assertJSON(try client.get("/feeds/\(feed)/changes?since=0"))
                XCTAssertEqual(try decodeListBatch(rebuilt).apply(to: [], values: decodeListValues(rebuilt)), listElements(latest["data"]!))
            }
        }
    }

    func testDatabaseStoppedAndStartedUnderLoad() throws {
        let server = try startServers(1)[0]
        let client = server.client
        let load = StoreLoad(client: client, writers: 2)
        load.start()
        XCTAssertTrue(eventually(timeout: 20) { load.acknowledged >= 10 }, "the load did not get going")

        try cluster.stop()
        assertUnavailable(client, while: "the database is stopped")
        try cluster.start()
        XCTAssertTrue(eventually(timeout: 10) { (try? client.get("/readyz").status) == 200 }, "/readyz is 200 within 10 s of the database's return")
        let countAtReturn = load.acknowledged
        XCTAssertTrue(eventually(timeout: 20) { load.acknowledged >= countAtReturn + 10 }, "writes did not resume")
        load.stop()
        load.check(client)
        XCTAssertTrue(server.log.contains("the PostgreSQL store is unavailable"), server.log)
        XCTAssertGreaterThan(try metric(client, "batchdiff_store_reconnects_total"), 0)
    }

    /// An event stream whose store goes away ends with `event: problem` (503
    /// `store_unavailable`) instead of hanging; once the database is back a new one opens.
    func testAnEventStreamEndsWhenItsStoreIsStopped() throws {
        let server = try startServers(1, ["--event-heartbeat", "1"])[0]
        let client = server.client
        let version = assertVersion(try client.put("/feeds/streamed", "[1]"))
        let stream = try EventStreamClient(client, "/feeds/streamed/changes?since=\(version)")
        XCTAssertEqual(stream.head.status, 200)
        try cluster.stop()
        let problem = try XCTUnwrap(stream.next(timeout: 15), "the stream ended without telling")
        XCTAssertEqual(problem.type, "problem")
        XCTAssertEqual(problem.object["code"] as? String, "store_unavailable")
        XCTAssertNil(try stream.next(timeout: 5), "the stream ends after the problem")
        try cluster.start()
        XCTAssertTrue(eventually(timeout: 10) { (try? client.get("/readyz").status) == 200 })
        let again = try EventStreamClient(client, "/feeds/streamed/changes?since=\(version)")
        XCTAssertEqual(again.head.status, 200)
        assertVersion(try client.put("/feeds/streamed", "[1, 2]"), version + 1)
        XCTAssertEqual(try again.next(timeout: 5)?.id, String(version + 1))
    }

    func testFrozenDatabaseAnswers503WithinFiveSeconds() throws {
        let server = try startServers(1)[0]
        let client = server.client
        let version = assertVersion(try client.put("/feeds/parked", "[{\"id\":1}]"))
        let load = StoreLoad(client: client, writers: 2)
        load.start()
        XCTAssertTrue(eventually(timeout: 20) { load.acknowledged >= 10 }, "the load did not get going")
        let ended = Collector<Int>()
        let poll = Thread { ended.append((try? client.get("/feeds/parked/changes?since=\(version)&wait=30", timeout: 40).status) ?? -1) }
        poll.start()
        XCTAssertTrue(eventually(timeout: 5) { (try? client.metric("batchdiff_long_polls_parked")) ?? 0 >= 1 })

        cluster.freeze()
        assertUnavailable(client, while: "the database is frozen")
        XCTAssertTrue(eventually(timeout: 35) { ended.all.count == 1 }, "the parked long poll did not end")
        XCTAssertTrue([200, 503].contains(ended.all.first ?? 0), "the parked long poll ended with \(ended.all)")
        cluster.thaw()
        XCTAssertTrue(eventually(timeout: 10) { (try? client.get("/readyz").status) == 200 }, "/readyz is 200 within 10 s of the database's return")
        let countAtReturn = load.acknowledged
        XCTAssertTrue(eventually(timeout: 20) { load.acknowledged >= countAtReturn + 10 }, "writes did not resume")
        load.stop()
        load.check(client)
    }

    func testServerStartsBeforeItsDatabase() throws {
        try cluster.stop()
        let server = try startServer(["--store", cluster.uri])
        XCTAssertEqual(try server.client.get("/healthz").status, 200)
        assertProblem(try server.client.get("/readyz"), 503, "store_unavailable")
        assertProblem(try server.client.get("/feeds/a"), 503, "store_unavailable")
        try cluster.start()
        XCTAssertTrue(eventually(timeout: 10) { (try? server.client.get("/readyz").status) == 200 }, "the server did not connect")
        assertVersion(try server.client.put("/feeds/a", "[{\"id\":1}]"))

        let malformed = try CommandRun(["serve", "--port", "0", "--store", "postgres://postgres@127.0.0.1/db?nosuchoption=1"])
        XCTAssertNotEqual(malformed.status, 0)
        XCTAssertTrue(malformed.error.contains("not a PostgreSQL connection URI"), malformed.error)
    }

    /// While the store is unreachable: `/readyz` turns 503 within 5 s; every feed request
    /// answers 503 `store_unavailable` within 5 s; `/healthz` and `POST /diff` answer at once.
    private func assertUnavailable(_ client: HTTPClient, while what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(eventually(timeout: 5) { (try? client.get("/readyz").status) == 503 }, "/readyz while \(what)", file: file, line: line)
        for (method, path, body) in [("GET", "/feeds/w0", nil), ("PUT", "/feeds/w0", "[]"), ("GET", "/feeds/w0/changes?since=0", nil), ("GET", "/feeds", nil)] {
            let start = Date()
            guard let response = try? client.request(method, path, body: body.map { Array($0.utf8) }, timeout: 10) else {
                XCTFail("\(method) \(path) while \(what): no answer", file: file, line: line)
                continue
            }
            assertProblem(response, 503, "store_unavailable", file: file, line: line)
            XCTAssertLessThan(Date().timeIntervalSince(start), 5, "\(method) \(path) while \(what)", file: file, line: line)
        }
        let start = Date()
        XCTAssertEqual(try? client.get("/healthz").status, 200, "/healthz while \(what)", file: file, line: line)
        XCTAssertEqual(try? client.post("/diff", "{\"old\":[1,2],\"new\":[2,1]}").status, 200, "POST /diff while \(what)", file: file, line: line)
        XCTAssertLessThan(Date().timeIntervalSince(start), 1, "/healthz and POST /diff while \(what)", file: file, line: line)
    }

    private func metric(_ client: HTTPClient, _ name: String) throws -> Int {
        let line = try client.get("/metrics").text.split(separator: "\n").first { $0.hasPrefix(name) }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) } ?? 0
    }
}

/// Writers, each on a feed of its own, each write conditional on the last one it had
/// acknowledged (`If-Match`), so a write answered 503 that was stored anyway makes the next
/// one fail with 412; and a reader. Every answer must be 200 or 503, but for the one case
/// docs/feeds.md §11 leaves: a database frozen in the instant between a write's clock check
/// and its commit's answer stores the write when it thaws, after its client got 503. That
/// 412 is taken once a writer (one write of each is in flight when the database freezes),
/// and only when the feed then holds exactly a write answered 503.
private final class StoreLoad: @unchecked Sendable {
    private let client: HTTPClient
    private let writers: Int
    private let lock = NSLock()
    private var running = true
    private var last: [Int: (version: Int, content: String)] = [:]
    private var unexpected: [String] = []
    private var count = 0
    private let group = DispatchGroup()

    init(client: HTTPClient, writers: Int) {
        self.client = client
        self.writers = writers
    }

    var acknowledged: Int { lock.withLock { count } }

    func start() {
        for writer in 0..<writers {
            group.enter()
            Thread { [self] in
                defer { group.leave() }
                write(as: writer)
            }.start()
        }
        group.enter()
        Thread { [self] in
            defer { group.leave() }
            while lock.withLock({ running }) {
                for path in ["/feeds/w0", "/feeds/w0/changes?since=0", "/feeds"] {
                    guard let response = try? client.get(path), [200, 404, 503].contains(response.status) else {
                        lock.withLock { unexpected.append("GET \(path) failed or answered otherwise") }
                        continue
                    }
                }
                usleep(20_000)
            }
        }.start()
    }

    private func write(as writer: Int) {
        var item = 0
        var answered503: [String] = []  // since the last write acknowledged
        var storedAfter503 = false
        while lock.withLock({ running }) {
            item += 1
            let content = canonicalJSON((0..<200).map { ["id": $0, "w": writer, "n": item] })
            let base = lock.withLock { last[writer]?.version }
            let headers = base.map { ["If-Match": tag($0)] } ?? [:]
            guard let response = try? client.put("/feeds/w\(writer)", content, headers: headers) else {
                lock.withLock { unexpected.append("writer \(writer): no answer") }
                continue
            }
            switch response.status {
            case 200:
                guard let version = int(response.object["version"]) else { continue }
                lock.withLock {
                    last[writer] = (version, content)
                    count += 1
                }
                answered503 = []
            case 503:
                answered503.append(content)
                usleep(50_000)
            case 412 where !answered503.isEmpty:
                let latest = try? client.get("/feeds/w\(writer)")
                guard let latest, latest.status == 200, let version = int(latest.object["version"]),
                      let stored = latest.object["data"].map(canonicalJSON), answered503.contains(stored), !storedAfter503
                else {
                    lock.withLock { unexpected.append("writer \(writer): PUT 412 \(response.text), and the feed does not hold a write answered 503") }
                    return
                }
                lock.withLock { last[writer] = (version, stored) }
                storedAfter503 = true
                answered503 = []
            default:
                lock.withLock { unexpected.append("writer \(writer): PUT \(response.status) \(response.text)") }
                return
            }
        }
    }

    func stop() {
        lock.withLock { running = false }
        _ = group.wait(timeout: .now() + 30)
    }

    /// Checks the answers, and that each feed's latest is its last acknowledged write.
    func check(_ client: HTTPClient, file: StaticString = #filePath, line: UInt = #line) {
        let (last, unexpected) = lock.withLock { (self.last, self.unexpected) }
        XCTAssertEqual(unexpected, [], "answers other than 200 or 503", file: file, line: line)
        for (writer, write) in last {
            guard let response = try? client.get("/feeds/w\(writer)") else { return XCTFail("w\(writer): no answer", file: file, line: line) }
            let latest = assertJSON(response, file: file, line: line)
            XCTAssertEqual(int(latest["version"]), write.version, "w\(writer): the last acknowledged version", file: file, line: line)
            XCTAssertEqual(latest["data"].map(canonicalJSON), write.content, "w\(writer): the last acknowledged content", file: file, line: line)
        }
    }
}
