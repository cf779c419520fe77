import Foundation
import XCTest

/// Debian's nginx with the repository's cache templates and tokens (docs/feeds.md §5.4,
/// docs/security.md): with `batchdiff-cache.conf.template`, a request with a token passes by
/// the cache (it neither waits on the lock nor is kept), unless it reads a public feed
/// (`--public-feeds`, the template rendered with the same patterns), whose followers share it
/// whatever their tokens; a `HEAD` never comes from the cache; no access log holds an
/// `access_token`.
final class NginxTokenCacheTests: SignedTokenTestCase {
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

    /// Per-user lists and a public leaderboard behind one cache (`--public-feeds leaderboard`,
    /// the template rendered with the same pattern): phones with different tokens, a garbage
    /// token and none share one upstream request a version for the leaderboard; no other
    /// user's token, no garbage token and no token ever gets user 42's list, before or after
    /// user 42 reads it (through the old public template, user 7's token got it as a HIT).
    func testPublicAndPrivateFeedsBehindOneCache() throws {
        let server = try startServer(["--jwt-keys", try keysFile(keySet()), "--public-feeds", "leaderboard"])
        let nginx = try NginxProcess(replicas: [server.port, server.port], template: "batchdiff-cache.conf.template", publicFeeds: "leaderboard")
        let write = bearer(token(["feeds": ["*"], "scope": "read write"]))
        let user = { (id: Int) in self.bearer(self.token(["sub": "\(id)", "feeds": ["todos-\(id)"], "scope": "read"])) }
        let version = assertVersion(try server.client.put("/feeds/leaderboard", "[1, 2]", headers: write))
        assertVersion(try server.client.put("/feeds/todos-42", #"[{"id": "t1", "title": "secret"}]"#, headers: write))
        let before = try server.client.requestsAnswered("GET", "/feeds/{id}/changes")
        let phones = (0..<18).map { user($0) } + [["Authorization": "Bearer garbage"], [:]]
        let through = HTTPClient(port: nginx.port)
        let polls = try phones.map { headers in
            let connection = try through.connect(timeout: 60)
            try connection.send(HTTPClient.requestBytes("GET", "/feeds/leaderboard/changes?since=\(version)&wait=30", body: nil, headers: headers))
            return connection
        }
        XCTAssertTrue(eventually(timeout: 10) { (try? server.client.metric("batchdiff_long_polls_parked")) ?? 0 >= 1 })
        usleep(500_000)  // every phone at nginx
        assertVersion(try server.client.put("/feeds/leaderboard", "[1, 2, 3]", headers: write), version + 1)
        for connection in polls {
            let answer = try connection.readResponse(timeout: 30)
            XCTAssertEqual(answer.status, 200)
            XCTAssertEqual(int(answer.object["to"]), version + 1)
        }
        let upstream = try server.client.requestsAnswered("GET", "/feeds/{id}/changes") - before
        XCTAssertLessThanOrEqual(upstream, 3, "20 phones, 18 tokens, a garbage one and none: \(nginx.errorLog)")
        // A page of the leaderboard, read by phones with different tokens: kept a second, shared.
        let pages = try [user(1), user(2), [:]].map { try through.get("/feeds/leaderboard?after=1&limit=10", headers: $0) }
        XCTAssertEqual(pages.map(\.status), [200, 200, 200])
        XCTAssertEqual(pages.map { $0.header("X-Cache-Status") ?? "" }, ["MISS", "HIT", "HIT"])
        // User 42's list: only user 42, whatever was asked before.
        let strangers: [[String: String]] = [user(7), ["Authorization": "Bearer garbage"], [:], ["Authorization": "Basic dXNlcjpwYXNz"]]
        for round in 0..<2 {
            for path in ["/feeds/todos-42", "/feeds/todos-42/changes?since=0", "/feeds/todos-42?limit=10"] {
                for headers in strangers {
                    let answer = try through.get(path, headers: headers)
                    XCTAssertTrue([401, 403].contains(answer.status), "round \(round), \(path), \(headers): \(answer.status) \(answer.text)")
                    XCTAssertFalse(answer.text.contains("secret"), "round \(round), \(path), \(headers)")
                    XCTAssertNotEqual(answer.header("X-Cache-Status"), "HIT", "round \(round), \(path), \(headers)")
                }
                let own = try through.get(path, headers: user(42))
                XCTAssertEqual(own.status, 200, "\(path): \(own.text)")
                XCTAssertTrue(own.text.contains("secret"))
                XCTAssertTrue(own.header("Cache-Control")?.contains("private") ?? true, "\(path): \(own.header("Cache-Control") ?? "")")
            }
        }
    }

    /// A `HEAD` goes upstream each time and leaves nothing a `GET` is served from; the
    /// access log of every template has the path and no `access_token`.
    func testHeadPassesByTheCacheAndTheLogHoldsNoToken() throws {
        let server = try startServer()
        let versions = try ["[1]", "[1, 2]"].map { assertVersion(try server.client.put("/feeds/h", $0)) }
        let range = "/feeds/h/changes?since=\(versions[0])&to=\(versions[1])"
        for (template, publicFeeds) in [("batchdiff.conf.template", nil), ("batchdiff-cache.conf.template", nil), ("batchdiff-cache.conf.template", "*")] as [(String, String?)] {
            let nginx = try NginxProcess(replicas: [server.port, server.port], template: template, publicFeeds: publicFeeds)
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
