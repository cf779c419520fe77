import Foundation
import XCTest

/// Debian's nginx with the repository's cache templates and tokens (docs/feeds.md §5.4,
/// docs/security.md): with `batchdiff-cache.conf.template`, a request with a token passes by
/// the cache (it neither waits on the lock nor is kept); with
/// `batchdiff-public-cache.conf.template` before a `--public-feeds` server, token holders
/// share it; a `HEAD` never comes from the cache; no access log holds an `access_token`.
final class NginxTokenCacheTests: ServerTestCase {
    /// `followers` long polls of `path` through `nginx`, each with its own `headers`, sent
    /// together; their answers and the seconds until the last.
    private func parked(_ path: String, through nginx: NginxProcess, headers: [[String: String]]) throws -> (answers: [HTTPResult], seconds: Double) {
        let through = HTTPClient(port: nginx.port)
        let started = Date()
        let polls = try headers.map { headers in
            let connection = try through.connect(timeout: 60)
            try connection.send(HTTPClient.requestBytes("GET", path, body: nil, headers: headers))
            return connection
        }
        let answers = try polls.map { try $0.readResponse(timeout: 60) }
        return (answers, Date().timeIntervalSince(started))
    }

    /// Four followers of a quiet feed, each with a token (three by header, one by query):
    /// all answered when their wait is over, none behind another, none kept.
    func testRequestsWithATokenPassByTheCache() throws {
        let server = try startServer(["--read-token", "reader", "--write-token", "writer"])
        let nginx = try NginxProcess(replicas: [server.port, server.port], template: "batchdiff-cache.conf.template")
        let version = assertVersion(try server.client.put("/feeds/quiet", "[1, 2]", headers: ["Authorization": "Bearer writer"]))
        let path = "/feeds/quiet/changes?since=\(version)&wait=3&cursor=0"
        let headers = (0..<4).map { ["Authorization": "Bearer \($0 % 2 == 0 ? "reader" : "writer")"] }
        let (answers, seconds) = try parked(path, through: nginx, headers: headers)
        XCTAssertEqual(answers.map(\.status), [200, 200, 200, 200])
        XCTAssertLessThan(seconds, 5.5, "four followers with tokens and a wait of 3 s: \(nginx.errorLog)")
        let byQuery = try HTTPClient(port: nginx.port).get("/feeds/quiet/changes?since=0&access_token=reader")
        XCTAssertEqual(byQuery.header("X-Cache-Status"), "BYPASS")
        let through = HTTPClient(port: nginx.port)
        for _ in 0..<2 {
            let answer = try through.get("/feeds/quiet/changes?since=0", headers: ["Authorization": "Bearer reader"])
            XCTAssertEqual(answer.status, 200)
            XCTAssertEqual(answer.header("X-Cache-Status"), "BYPASS", "a token holder's answer is never kept")
            XCTAssertTrue(answer.header("Cache-Control")?.contains("private") == true)
        }
        assertProblem(try through.get("/feeds/quiet/changes?since=0"), 401, "unauthorized")
    }

    /// With `--public-feeds` and the public template, followers with different tokens share
    /// one upstream request a version.
    func testTokenHoldersShareThePublicCache() throws {
        let server = try startServer(["--read-token", "reader", "--write-token", "writer", "--public-feeds"])
        let nginx = try NginxProcess(replicas: [server.port, server.port], template: "batchdiff-public-cache.conf.template")
        let write = ["Authorization": "Bearer writer"]
        let version = assertVersion(try server.client.put("/feeds/board", "[1, 2]", headers: write))
        let before = try server.client.requestsAnswered("GET", "/feeds/{id}/changes")
        let tokens = (0..<20).map { ["Authorization": "Bearer \($0 % 2 == 0 ? "reader" : "writer")"] }
        let through = HTTPClient(port: nginx.port)
        let polls = try tokens.map { headers in
            let connection = try through.connect(timeout: 60)
            try connection.send(HTTPClient.requestBytes("GET", "/feeds/board/changes?since=\(version)&wait=30", body: nil, headers: headers))
            return connection
        }
        XCTAssertTrue(eventually(timeout: 10) { (try? server.client.metric("batchdiff_long_polls_parked")) ?? 0 >= 1 })
        usleep(500_000)  // every follower at nginx
        assertVersion(try server.client.put("/feeds/board", "[1, 2, 3]", headers: write), version + 1)
        for connection in polls {
            let answer = try connection.readResponse(timeout: 30)
            XCTAssertEqual(answer.status, 200)
            XCTAssertEqual(int(answer.object["to"]), version + 1)
        }
        let upstream = try server.client.requestsAnswered("GET", "/feeds/{id}/changes") - before
        XCTAssertLessThanOrEqual(upstream, 3, "20 followers with two tokens: \(nginx.errorLog)")
    }

    /// A `HEAD` goes upstream each time and leaves nothing a `GET` is served from; the
    /// access log of every template has the path and no `access_token`.
    func testHeadPassesByTheCacheAndTheLogHoldsNoToken() throws {
        let server = try startServer()
        let versions = try ["[1]", "[1, 2]"].map { assertVersion(try server.client.put("/feeds/h", $0)) }
        let range = "/feeds/h/changes?since=\(versions[0])&to=\(versions[1])"
        for template in ["batchdiff.conf.template", "batchdiff-cache.conf.template", "batchdiff-public-cache.conf.template"] {
            let nginx = try NginxProcess(replicas: [server.port, server.port], template: template)
            let through = HTTPClient(port: nginx.port)
            let before = try server.client.requestsAnswered("HEAD", "/feeds/{id}/changes")
            for _ in 0..<2 {
                let head = try through.request("HEAD", range)
                XCTAssertEqual(head.status, 200, template)
                XCTAssertNotEqual(head.header("X-Cache-Status"), "HIT", template)
            }
            XCTAssertEqual(try server.client.requestsAnswered("HEAD", "/feeds/{id}/changes") - before, 2, "\(template): every HEAD upstream")
            if template != "batchdiff.conf.template" {
                XCTAssertEqual(try through.get(range).header("X-Cache-Status"), "MISS", "\(template): a HEAD left nothing in the cache")
            }
            XCTAssertEqual(try through.get("/feeds/h/changes?since=0&access_token=secret-in-the-query").status, 200)
            XCTAssertTrue(eventually(timeout: 5) { nginx.accessLog.contains("/feeds/h/changes") }, "\(template): \(nginx.accessLog)")
            XCTAssertFalse(nginx.accessLog.contains("secret-in-the-query"), "\(template): \(nginx.accessLog)")
        }
    }
}
