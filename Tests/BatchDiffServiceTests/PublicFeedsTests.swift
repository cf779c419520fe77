import Foundation
import XCTest

/// `--public-feeds PATTERNS` (docs/security.md): per-user lists and a public leaderboard on
/// one deployment. Public feeds are read by anyone, whatever token they send, and answered
/// `public`; every other feed needs a token that grants it and is answered `private`.
final class PublicFeedsTests: SignedTokenTestCase {
    func testPublicAndPrivateFeedsShareADeployment() throws {
        let server = try startServer(["--jwt-keys", try keysFile(keySet()), "--public-feeds", "leaderboard,scores-*"])
        let client = server.client
        let admin = bearer(token(["feeds": ["*"], "scope": "read write"]))
        let user7 = bearer(token(["sub": "7", "feeds": ["todos-7"], "scope": "read"]))
        let user42 = bearer(token(["sub": "42", "feeds": ["todos-42"], "scope": "read"]))
        for feed in ["leaderboard", "scores-eu", "scores", "todos-42"] {
            assertVersion(try client.put("/feeds/\(feed)", #"[{"id": "\#(feed)"}]"#, headers: admin))
        }
        // Public: anyone, with any Authorization or none, gets the same public answers.
        for headers in [[:], user7, user42, ["Authorization": "Bearer garbage"], ["Authorization": "Basic dXNlcjpwYXNz"]] {
            for feed in ["leaderboard", "scores-eu"] {
                let whole = try client.get("/feeds/\(feed)", headers: headers)
                XCTAssertEqual(whole.status, 200, "\(feed) \(headers): \(whole.text)")
                XCTAssertNotEqual(whole.header("Cache-Control")?.contains("private"), true, "\(feed) \(headers)")
                let changes = try client.get("/feeds/\(feed)/changes?since=0", headers: headers)
                XCTAssertEqual(changes.status, 200, "\(feed) \(headers)")
                XCTAssertEqual(changes.header("Cache-Control"), "public, max-age=1", "\(feed) \(headers)")
            }
        }
        XCTAssertEqual(try client.get("/feeds/leaderboard?access_token=garbage").status, 200)
        // Its pages, as a popular list's phones read it, may be kept a second by a cache.
        for path in ["/feeds/leaderboard?limit=10", "/feeds/leaderboard?after=leaderboard&limit=10"] {
            XCTAssertEqual(try client.get(path, headers: user7).header("Cache-Control"), "public, max-age=1", path)
        }
        XCTAssertEqual(try client.get("/feeds/todos-42?limit=10", headers: user42).header("Cache-Control"), "private")
        // Writes to a public feed still need write rights.
        assertProblem(try client.put("/feeds/leaderboard", "[]"), 401, "unauthorized")
        assertProblem(try client.put("/feeds/leaderboard", "[]", headers: user7), 403, "insufficient_scope")
        // Private: only a token granting it, answered private; "scores" is not "scores-*".
        for feed in ["todos-42", "scores"] {
            assertProblem(try client.get("/feeds/\(feed)"), 401, "unauthorized")
            assertProblem(try client.get("/feeds/\(feed)/changes?since=0", headers: ["Authorization": "Bearer garbage"]), 403, "forbidden")
            assertProblem(try client.get("/feeds/\(feed)/changes?since=0", headers: user7), 403, "insufficient_scope")
        }
        let own = try client.get("/feeds/todos-42/changes?since=0", headers: user42)
        XCTAssertEqual(own.status, 200)
        XCTAssertEqual(own.header("Cache-Control"), "private, max-age=1")
        // The listing depends on the token: never public.
        assertProblem(try client.get("/feeds"), 401, "unauthorized")
        XCTAssertEqual(try client.get("/feeds", headers: admin).header("Cache-Control"), "private")
    }

    /// The flag alone, and `BATCHDIFF_PUBLIC_FEEDS=true`, make every feed public, as before
    /// it took patterns; a pattern no feed id can match stops the server at start.
    func testTheFlagAloneIsEveryFeedAndBadPatternsStopTheServer() throws {
        for (arguments, environment) in [(["--read-token", "r", "--public-feeds"], [:]), (["--public-feeds", "--read-token", "r"], [:]),
                                         (["--read-token", "r"], ["BATCHDIFF_PUBLIC_FEEDS": "true"]), (["--read-token", "r"], ["BATCHDIFF_PUBLIC_FEEDS": "a*,b"])] {
            let client = try startServer(arguments, environment: environment).client
            assertVersion(try client.put("/feeds/a1", "[1]", headers: ["Authorization": "Bearer r"]))
            let read = try client.get("/feeds/a1/changes?since=0")
            XCTAssertEqual(read.status, 200, "\(arguments) \(environment)")
            XCTAssertEqual(read.header("Cache-Control"), "public, max-age=1", "\(arguments) \(environment)")
        }
        for (arguments, environment, named) in [(["--public-feeds", "K\u{212A}*"], [String: String](), "--public-feeds"), (["--public-feeds", "a*b"], [:], "--public-feeds"),
                                                ([], ["BATCHDIFF_PUBLIC_FEEDS": "ok,,"], "BATCHDIFF_PUBLIC_FEEDS")] {
            let refused = try CommandRun(["serve", "--port", "0"] + arguments, environment: environment)
            XCTAssertEqual(refused.status, 64, "\(arguments) \(environment): \(refused.error)")
            XCTAssertTrue(refused.error.contains("\(named):"), refused.error)
            XCTAssertFalse(refused.output.contains("listening"))
        }
    }
}
