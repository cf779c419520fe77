import Foundation
import XCTest

/// Debian's nginx with the repository's caching template (`deploy/nginx/batchdiff-cache.conf.template`)
/// in front of a server (docs/feeds.md §5.4): many followers parked on one feed reach the
/// server a few times for a new version, each gets the right batch; ranges are kept; a 410
/// never is; a feed deleted and created again gives no follower an answer of its old life
/// once the old answers' second is over.
final class NginxCacheTests: ServerTestCase {
    /// `GET`s of `changes` the server answered so far.
    private func upstreamChanges(_ server: ServerProcess) throws -> Int {
        try server.client.requestsAnswered("GET", "/feeds/{id}/changes")
    }

    /// `followers` long polls parked through `nginx` on `feed` at version `since`, then a
    /// version written; each answer checked; the `changes` requests the server saw.
    private func collapse(_ followers: Int, on feed: String, since: Int, nginx: NginxProcess, server: ServerProcess) throws -> Int {
        let before = try upstreamChanges(server)
        let request = HTTPClient.requestBytes("GET", "/feeds/\(feed)/changes?since=\(since)&wait=30", body: nil, headers: [:])
        let through = HTTPClient(port: nginx.port)
        let polls = try (0..<followers).map { _ in
            let connection = try through.connect(timeout: 60)
            try connection.send(request)
            return connection
        }
        XCTAssertTrue(eventually(timeout: 10) { (try? server.client.metric("batchdiff_long_polls_parked")) ?? 0 >= 1 }, "no long poll reached the server")
        usleep(500_000)  // every follower at nginx
        assertVersion(try server.client.put("/feeds/\(feed)", "[1, 2, 3]"), since + 1)
        for connection in polls {
            let response = try connection.readResponse(timeout: 30)
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(int(response.object["from"]), since)
            XCTAssertEqual(int(response.object["to"]), since + 1)
            XCTAssertEqual(canonicalJSON(response.object["values"] ?? [:]), canonicalJSON(["rows": ["inserted": [3], "reloaded": [Any]()]]))
        }
        return try upstreamChanges(server) - before
    }

    func testFollowersCollapseIntoFewUpstreamRequests() throws {
        let server = try startServer()
        let nginx = try NginxProcess(replicas: [server.port, server.port], template: "batchdiff-cache.conf.template")
        let version = assertVersion(try server.client.put("/feeds/hot", "[1, 2]"))
        let upstream = try collapse(300, on: "hot", since: version, nginx: nginx, server: server)
        print("300 followers through the cache: \(upstream) upstream requests for one version")
        XCTAssertLessThanOrEqual(upstream, 3, "300 followers of one version: \(nginx.errorLog)")
        XCTAssertGreaterThanOrEqual(upstream, 1)
    }

    /// On a feed nobody writes, followers that ask with a cursor (as the client library
    /// does) get their empty answers when the wait is over, every one of them: nginx keeps
    /// the one that went upstream for the others its lock holds, and they all ask next with
    /// the cursor it names. Without the cursor, an empty answer is not kept, and each follower
    /// the lock holds would go upstream after the one before, a wait each.
    func testFollowersOfAQuietFeedAreAnsweredWhenTheirWaitIsOver() throws {
        let server = try startServer()
        let nginx = try NginxProcess(replicas: [server.port, server.port], template: "batchdiff-cache.conf.template")
        let version = assertVersion(try server.client.put("/feeds/quiet", "[1, 2]"))
        let through = HTTPClient(port: nginx.port)
        let before = try upstreamChanges(server)
        var cursor = 0
        for round in 1...2 {
            let request = HTTPClient.requestBytes("GET", "/feeds/quiet/changes?since=\(version)&wait=2&cursor=\(cursor)", body: nil, headers: [:])
            let started = Date()
            let polls = try (0..<40).map { _ in
                let connection = try through.connect(timeout: 30)
                try connection.send(request)
                return connection
            }
            var cursors = Set<String>()
            for connection in polls {
                let response = try connection.readResponse(timeout: 20)
                XCTAssertEqual(response.status, 200)
                XCTAssertEqual(int(response.object["to"]), version)
                cursors.insert(response.header("BatchDiff-Cursor") ?? "none")
            }
            let took = Date().timeIntervalSince(started)
            XCTAssertLessThan(took, 6, "round \(round): 40 followers of a quiet feed, a wait of 2 s: \(nginx.errorLog)")
            XCTAssertEqual(cursors.count, 1, "round \(round): one answer, kept for all: \(cursors)")
            cursor = try XCTUnwrap(cursors.first.flatMap(Int.init))
        }
        let upstream = try upstreamChanges(server) - before
        XCTAssertLessThanOrEqual(upstream, 4, "two waits of 40 followers")
    }

    func testRangesAreKeptAndProblemsNever() throws {
        let server = try startServer(["--max-versions", "2"])
        let nginx = try NginxProcess(replicas: [server.port, server.port], template: "batchdiff-cache.conf.template")
        let through = HTTPClient(port: nginx.port)
        let v = try ["[1]", "[1, 2]", "[2, 3]"].map { assertVersion(try server.client.put("/feeds/r", $0)) }
        let range = "/feeds/r/changes?since=\(v[1])&to=\(v[2])"
        let first = try through.get(range)
        XCTAssertEqual(first.status, 200)
        XCTAssertEqual(first.header("X-Cache-Status"), "MISS")
        let again = try through.get(range)
        XCTAssertEqual(again.header("X-Cache-Status"), "HIT", "a range is kept")
        XCTAssertEqual(again.text, first.text)
        // A version no longer retained: a 410 each time, from the server.
        let before = try upstreamChanges(server)
        for _ in 0..<2 {
            let gone = try through.get("/feeds/r/changes?since=\(v[0])")
            XCTAssertEqual(gone.status, 410)
            XCTAssertNotEqual(gone.header("X-Cache-Status"), "HIT")
        }
        XCTAssertEqual(try upstreamChanges(server) - before, 2, "a 410 is never kept")
    }

    func testADeletedFeedsOldLifeIsNotServedPastItsSecond() throws {
        let server = try startServer()
        let nginx = try NginxProcess(replicas: [server.port, server.port], template: "batchdiff-cache.conf.template")
        let through = HTTPClient(port: nginx.port)
        let old = try ["[1]", "[1, 2]"].map { assertVersion(try server.client.put("/feeds/d", $0)) }
        let cached = try through.get("/feeds/d/changes?since=\(old[0])")
        XCTAssertEqual(int(cached.object["to"]), old[1])
        XCTAssertEqual(try server.client.request("DELETE", "/feeds/d").status, 204)
        let new = assertVersion(try server.client.put("/feeds/d", "[7]"))
        XCTAssertGreaterThan(new, old[1], "a new life's versions are above the old one's")
        usleep(2_100_000)  // past the old answer's max-age (a cache counts it in whole seconds)
        assertProblem(try through.get("/feeds/d/changes?since=\(old[0])"), 410, "version_gone")
        let fresh = try through.get("/feeds/d/changes?since=0")
        XCTAssertEqual(int(fresh.object["to"]), new)
        XCTAssertEqual(canonicalJSON(fresh.object["values"] ?? [:]), canonicalJSON(["rows": ["inserted": [7], "reloaded": [Any]()]]))
    }
}
