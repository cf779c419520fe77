import Foundation
import Glibc
import XCTest

/// `--store sqlite:PATH`: feeds survive a restart and `kill -9`, and a file belongs to one
/// server (docs/feeds.md §11).
final class SQLiteStoreTests: ServerTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("batchdiff-sqlite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        super.tearDown()
        try? FileManager.default.removeItem(at: directory)
    }

    private var store: String { "sqlite:" + directory.appendingPathComponent("feeds.db").path }

    /// Every answer a client can get about `feeds`, as bytes: the listing, each feed whole,
    /// a conditional GET, and `changes` from every version kept.
    private func answers(_ client: HTTPClient, _ feeds: [String: [Int]]) throws -> [String: String] {
        var answers = ["list": try client.get("/feeds").text]
        for (feed, versions) in feeds {
            let latest = try client.get("/feeds/\(feed)")
            answers[feed] = latest.text
            answers[feed + " 304"] = "\(try client.get("/feeds/\(feed)", headers: ["If-None-Match": tag(versions.last!)]).status)"
            for since in [0] + versions {
                answers["\(feed) since \(since)"] = try client.get("/feeds/\(feed)/changes?since=\(since)").text
            }
        }
        return answers
    }

    func testIfNoneMatchCreatesOnly() throws {
        try assertCreateOnlyWrites(try startServer(["--store", store]).client, feed: "signup")
    }

    func testASortedFeedKeepsItsOrderAcrossARestart() throws {
        var server = try startServer(["--store", store])
        try assertSortedFeedKeepsItsOrder(server.client, reopened: {
            XCTAssertEqual(server.terminate(), 0)
            server = try startServer(["--store", store])
            return server.client
        }, feed: "leaderboard")
    }

    func testFeedsSurviveARestart() throws {
        let first = try startServer(["--store", store, "--max-versions", "5"])
        var generator = SnapshotGenerator(seed: 21)
        var list: [Any] = []
        var sectioned: [String: Any] = ["sections": []]
        var versions: [String: [Int]] = [:]
        for _ in 0..<8 {
            list = generator.nextList(after: list)
            sectioned = generator.nextSectioned(after: sectioned)
            versions["list", default: []].append(assertVersion(try first.client.put("/feeds/list", jsonText(list))))
            versions["sections", default: []].append(assertVersion(try first.client.put("/feeds/sections", jsonText(sectioned))))
        }
        let kept = versions.mapValues { Array($0.suffix(5)) }
        let before = try answers(first.client, kept)
        XCTAssertEqual(first.terminate(), 0)

        let second = try startServer(["--store", store, "--max-versions", "5"])
        XCTAssertEqual(try answers(second.client, kept), before, "every answer is the same after a restart")
        assertVersionGone(try second.client.get("/feeds/list/changes?since=\(versions["list"]![0])"), latest: versions["list"]!.last!)
        assertVersion(try second.client.put("/feeds/list", jsonText(generator.nextList(after: list))), versions["list"]!.last! + 1)
    }

    /// After a restart nothing is kept in memory: a window from any retained version is seen
    /// through the batches the file keeps with the versions since (docs/feeds.md §5.3),
    /// never by reading a whole older version, and takes the client's window to the latest.
    func testWindowsAfterARestartAreSeenThroughTheVersionsBatches() throws {
        let first = try startServer(["--store", store, "--max-versions", "6"])
        var generator = SnapshotGenerator(seed: 27)
        var list: [Any] = []
        var written: [(version: Int, rows: [Any])] = []
        for _ in 0..<9 {
            list = generator.nextList(after: list)
            written.append((assertVersion(try first.client.put("/feeds/list", jsonText(list))), list))
        }
        let patched = assertJSON(try first.client.request(
            "PATCH", "/feeds/list", body: Array(#"{"ops": [{"op": "upsert", "item": {"id": "patched"}, "at": "start"}]}"#.utf8)
        ))
        list.insert(["id": "patched"], at: 0)
        written.append((try XCTUnwrap(int(patched["version"])), list))
        XCTAssertEqual(first.terminate(), 0)

        let second = try startServer(["--store", store, "--max-versions", "6"])
        var asked = 0
        for held in written.suffix(6).dropLast() {
            for (offset, limit) in [(0, 5), (3, 4), (max(0, list.count - 3), 10)] {
                let answer = assertJSON(try second.client.get("/feeds/list/changes?since=\(held.version)&offset=\(offset)&limit=\(limit)"))
                let slice = { (rows: [Any]) in Array(rows.dropFirst(offset).prefix(limit)) }
                let batch = try decodeListBatch(answer)
                XCTAssertEqual(
                    try batch.apply(to: listElements(slice(held.rows)), values: decodeListValues(answer)), listElements(slice(list)),
                    "since \(held.version), window \(offset), \(limit): \(answer)"
                )
                asked += 1
            }
        }
        XCTAssertEqual(try second.client.metric(#"batchdiff_feed_window_batches_total{through="versions"}"#), asked)
        XCTAssertEqual(try second.client.metric(#"batchdiff_feed_window_batches_total{through="whole"}"#), 0)
    }

    func testAcknowledgedWritesSurviveKillDashNine() throws {
        let server = try startServer(["--store", store])
        let acknowledged = AcknowledgedWrites()
        let writers = acknowledged.startWriters(4, rounds: 200, clients: [server.client], unexpected: Collector<String>())
        // (Every writer acknowledged once: on a busy machine, one may start late.)
        XCTAssertTrue(eventually(timeout: 30) { acknowledged.count >= 20 && acknowledged.last.count == 4 }, "the writers did not get going")
        kill(server.pid, SIGKILL)
        XCTAssertNotNil(server.waitForExit(timeout: 10))
        XCTAssertTrue(eventually(timeout: 120) { !writers.isExecuting }, "the writers did not end")

        let restarted = try startServer(["--store", store])
        XCTAssertEqual(acknowledged.last.count, 4, "every writer had a write acknowledged")
        for (feed, last) in acknowledged.last {
            let latest = assertJSON(try restarted.client.get("/feeds/\(feed)"))
            let version = try XCTUnwrap(int(latest["version"]))
            XCTAssertGreaterThanOrEqual(version, last.version, "\(feed): an acknowledged version was lost")
            if version == last.version {
                XCTAssertEqual(latest["data"].map(canonicalJSON), last.content, "\(feed): the acknowledged content")
            }
            let rebuilt = assertJSON(try restarted.client.get("/feeds/\(feed)/changes?since=0"))
            XCTAssertEqual(try decodeListBatch(rebuilt).apply(to: [], values: decodeListValues(rebuilt)), listElements(latest["data"]!))
        }
    }

    func testAFileBelongsToOneServer() throws {
        _ = try startServer(["--store", store])
        XCTAssertThrowsError(try ServerProcess(["--store", store]), "two servers shared one SQLite file") { error in
            XCTAssertTrue("\(error)".contains("in use by another server"), "\(error)")
        }
        let bad = try CommandRun(["serve", "--port", "0", "--store", "sqlite:"])
        XCTAssertEqual(bad.status, 64, bad.error)
        XCTAssertTrue(bad.error.contains("expected memory, sqlite:PATH or postgres://"), bad.error)
        let unopenable = try CommandRun(["serve", "--port", "0", "--store", "sqlite:/nonexistent-directory/feeds.db"])
        XCTAssertNotEqual(unopenable.status, 0)
        XCTAssertTrue(unopenable.error.contains("cannot open the SQLite file"), unopenable.error)
    }
}
