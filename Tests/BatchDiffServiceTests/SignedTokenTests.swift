import Crypto
import Foundation
import XCTest

/// Signed tokens per feed (docs/security.md): tokens signed here with HS256, EdDSA and
/// ES256 keys the server reads from a JWK Set file; each user's token reads, lists, follows
/// and writes its own feeds and nothing of another's; every invalid token is a 401
/// `invalid_token`; keys rotate on SIGHUP.
final class SignedTokenTests: SignedTokenTestCase {
    func testATokenReadsListsFollowsAndWritesOnlyTheFeedsItNames() throws {
        let server = try startServer(["--jwt-keys", try keysFile(keySet()), "--write-token", "admin"])
        let client = server.client
        for feed in ["user-1-inbox", "user-1-orders", "user-2-inbox", "user-10-inbox", "news"] {
            assertJSON(try client.put("/feeds/\(feed)", #"[{"id":1,"t":"\#(feed)"}]"#, headers: bearer("admin")))
        }
        let user1 = token(["sub": "user-1", "feeds": ["user-1-*"], "scope": "read"])
        let user2 = token(["sub": "user-2", "feeds": ["user-2-inbox"], "scope": "read write"], alg: "EdDSA", kid: "e1")
        let reader = token(["feeds": ["news"]], alg: "ES256", kid: "p1")

        // Reads: its own feeds, by header or by access_token (as EventSource sends it).
        assertJSON(try client.get("/feeds/user-1-inbox", headers: bearer(user1)))
        assertJSON(try client.get("/feeds/user-1-orders/changes?since=0&access_token=\(user1)"))
        assertJSON(try client.get("/feeds/news", headers: bearer(reader)))
        for (token, feed) in [(user1, "user-2-inbox"), (user1, "user-10-inbox"), (user1, "news"), (user2, "user-1-inbox"), (reader, "user-1-inbox")] {
            for path in ["/feeds/\(feed)", "/feeds/\(feed)/changes?since=0", "/feeds/\(feed)/changes?since=0&wait=5"] {
                let refused = try client.get(path, headers: bearer(token))
                assertProblem(refused, 403, "insufficient_scope")
                XCTAssertEqual(refused.header("WWW-Authenticate"), #"Bearer error="insufficient_scope""#)
            }
            assertProblem(try client.get("/feeds/\(feed)/changes?since=0", headers: bearer(token).merging(["Accept": "text/event-stream"]) { $1 }), 403, "insufficient_scope")
            assertProblem(try client.get("/feeds/\(feed)/changes?since=0&access_token=\(token)"), 403, "insufficient_scope")
        }
        // Listing: only what the token names, found by its patterns; paged.
        let listed = { (token: String, query: String) in
            ((try client.get("/feeds\(query)", headers: self.bearer(token)).object["feeds"] as? [[String: Any]]) ?? []).compactMap { $0["feed"] as? String }
        }
        XCTAssertEqual(try listed(user1, ""), ["user-1-inbox", "user-1-orders"])
        XCTAssertEqual(try listed(user1, "?limit=1"), ["user-1-inbox"])
        XCTAssertEqual(try client.get("/feeds?limit=1", headers: bearer(user1)).object["next"] as? String, "user-1-inbox")
        XCTAssertEqual(try listed(user1, "?after=user-1-inbox"), ["user-1-orders"])
        XCTAssertEqual(try listed(user2, ""), ["user-2-inbox"])
        XCTAssertEqual(try listed(reader, ""), ["news"])
        XCTAssertEqual(try listed("admin", "").count, 5, "the write token lists every feed")
        // Writes: write scope, and only the feeds named.
        assertJSON(try client.put("/feeds/user-2-inbox", #"[{"id":2}]"#, headers: bearer(user2)))
        assertJSON(try client.request("PATCH", "/feeds/user-2-inbox", body: Array(#"{"ops":[{"op":"upsert","item":{"id":3}}]}"#.utf8), headers: bearer(user2)))
        assertProblem(try client.put("/feeds/user-1-inbox", "[]", headers: bearer(user2)), 403, "insufficient_scope")
        assertProblem(try client.delete("/feeds/user-1-orders", headers: bearer(user2)), 403, "insufficient_scope")
        assertProblem(try client.put("/feeds/user-1-inbox", "[]", headers: bearer(user1)), 403, "insufficient_scope")
        assertProblem(try client.get("/feeds/user-1-inbox"), 401, "unauthorized")
        XCTAssertEqual(try client.get("/feeds/user-1-inbox", headers: bearer(user1)).object["data"].map { "\($0)" }?.contains("user-1-inbox"), true)
        // POST /diff takes any valid read token; a write-only token reads nothing.
        assertJSON(try client.post("/diff", #"{"old":[1],"new":[2]}"#, headers: bearer(reader)))
        let writeOnly = token(["feeds": ["news"], "scope": "write"])
        assertProblem(try client.post("/diff", #"{"old":[1],"new":[2]}"#, headers: bearer(writeOnly)), 403, "insufficient_scope")
        assertProblem(try client.get("/feeds/news", headers: bearer(writeOnly)), 403, "insufficient_scope")
        assertProblem(try client.get("/feeds/news", headers: bearer("someone")), 403, "forbidden")
    }

    /// Listing by a token's patterns reads each pattern's range of ids from the store's
    /// index: the same in the memory store, SQLite and PostgreSQL.
    func testListingByPatternsInEveryStore() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tokens-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cluster = try PostgresCluster()
        for store in ["memory", "sqlite:" + directory.appendingPathComponent("feeds.db").path, cluster.uri] {
            let client = try startServer(["--store", store, "--jwt-keys", try keysFile(keySet()), "--write-token", "admin"]).client
            XCTAssertTrue(eventually(timeout: 10) { (try? client.get("/readyz").status) == 200 }, "the server did not get ready")
            for feed in ["a", "a-1", "a-10", "a-2", "b-1", "b-10"] {
                assertJSON(try client.put("/feeds/\(feed)", "[1]", headers: bearer("admin")), 200)
            }
            let listed = { (token: String, query: String) -> [String] in
                ((try client.get("/feeds\(query)", headers: self.bearer(token)).object["feeds"] as? [[String: Any]]) ?? []).compactMap { $0["feed"] as? String }
            }
            let mixed = token(["feeds": ["a-1*", "b-1"]])
            XCTAssertEqual(try listed(mixed, ""), ["a-1", "a-10", "b-1"], store)
            XCTAssertEqual(try listed(mixed, "?limit=2"), ["a-1", "a-10"], store)
            XCTAssertEqual(try client.get("/feeds?limit=2", headers: bearer(mixed)).object["next"] as? String, "a-10", store)
            XCTAssertEqual(try listed(mixed, "?after=a-10"), ["b-1"], store)
            XCTAssertEqual(try listed(token(["feeds": ["a-1", "c"]]), ""), ["a-1"], store)
            XCTAssertEqual(try listed(token(["feeds": ["*"]]), "").count, 6, store)
            XCTAssertEqual(try listed(token([:]), ""), [], store)
        }
    }

    func testEveryInvalidTokenIs401InvalidToken() throws {
        let server = try startServer(["--jwt-keys", try keysFile(keySet()), "--jwt-audience", "batchdiff"])
        let client = server.client
        assertJSON(try client.put("/feeds/news", "[1]", headers: bearer(token(["feeds": ["*"], "scope": "write", "aud": "batchdiff"]))))
        let claims: [String: Any] = ["feeds": ["news"], "aud": ["other", "batchdiff"]]
        assertJSON(try client.get("/feeds/news", headers: bearer(token(claims))))
        let good = token(claims)
        let parts = good.split(separator: ".").map(String.init)
        let forged = base64url(json(["feeds": ["*"], "aud": "batchdiff", "exp": now + 3600]))
        let invalid: [(String, String)] = [
            ("expired", token(claims.merging(["exp": now - 5]) { $1 })),
            ("not yet valid", token(claims.merging(["nbf": now + 60]) { $1 })),
            ("no exp", token(claims.merging(["exp": "soon"]) { $1 })),
            ("another audience", token(claims.merging(["aud": "other"]) { $1 })),
            ("no audience", token(["feeds": ["news"]])),
            ("unknown kid", token(claims, kid: "h9")),
            ("alg none", token(claims, alg: "none") { _ in Data() }),
            ("HS256 with the Ed25519 key's kid", token(claims, alg: "HS256", kid: "e1")),
            ("EdDSA with the HMAC key's kid", token(claims, alg: "EdDSA", kid: "h1")),
            ("bad signature", parts[0] + "." + forged + "." + parts[2]),
            ("two parts", parts[0] + "." + parts[1]),
            ("not base64url", "a.b.c"),
            ("feeds not patterns", token(claims.merging(["feeds": ["a*b"]]) { $1 })),
        ]
        for (name, token) in invalid {
            let refused = try client.get("/feeds/news", headers: bearer(token))
            assertProblem(refused, 401, "invalid_token")
            XCTAssertEqual(refused.header("WWW-Authenticate"), #"Bearer error="invalid_token""#, name)
        }
        // A leeway takes a token a little past its time, and no more.
        let lenient = try startServer(["--jwt-keys", try keysFile(keySet()), "--jwt-leeway", "30"]).client
        assertJSON(try lenient.put("/feeds/news", "[1]", headers: bearer(token(["feeds": ["news"], "scope": "write", "exp": now - 10]))))
        assertProblem(try lenient.get("/feeds/news", headers: bearer(token(["feeds": ["news"], "exp": now - 60]))), 401, "invalid_token")
    }

    func testLongPollsAndStreamsEndWhenTheirTokenExpires() throws {
        let server = try startServer(["--jwt-keys", try keysFile(keySet()), "--event-heartbeat", "30"])
        let client = server.client
        let version = assertVersion(try client.put("/feeds/f", "[1]", headers: bearer(token(["feeds": ["f"], "scope": "write"]))))
        let expiring = token(["feeds": ["f"], "exp": Date().timeIntervalSince1970 + 2])
        // A long poll at the latest: cut short at expiry, with a 401.
        let started = Date()
        let refused = try client.get("/feeds/f/changes?since=\(version)&wait=20", headers: bearer(expiring), timeout: 30)
        assertProblem(refused, 401, "invalid_token")
        XCTAssertLessThan(Date().timeIntervalSince(started), 6, "the long poll waited past its token's expiry")
        // A stream: its events, then at expiry a problem event, then the end.
        let stream = try EventStreamClient(client, "/feeds/f/changes?since=0", headers: bearer(token(["feeds": ["f"], "exp": Date().timeIntervalSince1970 + 2])))
        XCTAssertEqual(stream.head.status, 200)
        XCTAssertEqual(try stream.next()?.type, "message")
        let rest = try stream.readToEnd(timeout: 15)
        XCTAssertEqual(rest.map(\.type), ["problem"])
        XCTAssertEqual(rest.first?.object["code"] as? String, "invalid_token")
        // A token valid longer is not cut short: its long poll times out as asked.
        let lasting = try client.get("/feeds/f/changes?since=\(version)&wait=1", headers: bearer(token(["feeds": ["f"]])))
        XCTAssertEqual(lasting.status, 200)
    }

    /// `--max-streams-per-client`: a client (a token's subject, else its token, else its
    /// address) holding that many parked streams and long polls gets 429 for one more;
    /// others, and health checks, do not.
    func testStreamsPerClientAreLimited() throws {
        let server = try startServer(["--jwt-keys", try keysFile(keySet()), "--max-streams-per-client", "2", "--event-heartbeat", "30"])
        let client = server.client
        let version = assertVersion(try client.put("/feeds/f", "[1]", headers: bearer(token(["feeds": ["f"], "scope": "write"]))))
        let alice = token(["sub": "alice", "feeds": ["f"]])
        let aliceAgain = token(["sub": "alice", "feeds": ["*"], "exp": now + 600])
        var streams = try (0..<2).map { _ in try EventStreamClient(client, "/feeds/f/changes?since=\(version)", headers: bearer(alice)) }
        XCTAssertEqual(streams.map(\.head.status), [200, 200])
        // The same subject, by another token, by stream or by long poll: refused.
        let refused = try client.get("/feeds/f/changes?since=\(version)", headers: bearer(aliceAgain).merging(["Accept": "text/event-stream"]) { $1 })
        assertProblem(refused, 429, "too_many_streams")
        XCTAssertEqual(refused.header("Retry-After"), "5")
        assertProblem(try client.get("/feeds/f/changes?since=\(version)&wait=5", headers: bearer(alice)), 429, "too_many_streams")
        // A quick read is no stream; another subject is another client; probes pass.
        assertJSON(try client.get("/feeds/f/changes?since=\(version)", headers: bearer(alice)))
        let bob = try EventStreamClient(client, "/feeds/f/changes?since=\(version)", headers: bearer(token(["sub": "bob", "feeds": ["f"]])))
        XCTAssertEqual(bob.head.status, 200)
        XCTAssertEqual(try client.get("/healthz").status, 200)
        XCTAssertTrue(try client.get("/metrics").text.contains(#"batchdiff_refusals_total{reason="streams_per_client"} 2"#))
        // One of alice's streams closed: she may open another.
        streams.removeLast().connection.close()
        XCTAssertTrue(eventually(timeout: 10) {
            (try? EventStreamClient(client, "/feeds/f/changes?since=\(version)", headers: self.bearer(alice)))?.head.status == 200
        })
        // Without tokens, a client is its address.
        let open = try startServer(["--max-streams-per-client", "1", "--event-heartbeat", "30"]).client
        let openVersion = assertVersion(try open.put("/feeds/f", "[1]"))
        let first = try EventStreamClient(open, "/feeds/f/changes?since=\(openVersion)")
        XCTAssertEqual(first.head.status, 200)
        assertProblem(try open.get("/feeds/f/changes?since=\(openVersion)&wait=5"), 429, "too_many_streams")
        // A token the server does not check makes no new client (any made-up one was one).
        let madeUp = ["Authorization": "Bearer made-up-\(UInt64.random(in: 0...UInt64.max))"]
        assertProblem(try open.get("/feeds/f/changes?since=\(openVersion)&wait=5", headers: madeUp), 429, "too_many_streams")
    }

    func testKeysRotateOnSIGHUPAndABrokenSetKeepsThoseInForce() throws {
        let other = SymmetricKey(size: .bits256)
        let oldSet = keySet([["kty": "oct", "kid": "h1", "k": base64url(secret.withUnsafeBytes { Data($0) })]])
        let newSet = keySet([["kty": "oct", "kid": "h2", "k": base64url(other.withUnsafeBytes { Data($0) })]])
        let path = try keysFile(oldSet)
        let server = try startServer(["--jwt-keys", path])
        let client = server.client
        let oldToken = token(["feeds": ["*"], "scope": "read write"])
        let newToken = token(["feeds": ["*"], "scope": "read write"], kid: "h2") { Data(HMAC<SHA256>.authenticationCode(for: $0, using: other)) }
        assertJSON(try client.put("/feeds/f", "[1]", headers: bearer(oldToken)))
        assertProblem(try client.get("/feeds/f", headers: bearer(newToken)), 401, "invalid_token")
        try newSet.write(to: URL(fileURLWithPath: path))
        kill(server.pid, SIGHUP)
        XCTAssertTrue(eventually(timeout: 10) { (try? client.get("/feeds/f", headers: self.bearer(newToken)).status) == 200 }, "the new key never took")
        assertProblem(try client.get("/feeds/f", headers: bearer(oldToken)), 401, "invalid_token")
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: path))
        kill(server.pid, SIGHUP)
        // Checked once the reload was refused (its log line), not after a pause it may outlast.
        XCTAssertTrue(eventually(timeout: 10) { server.log.contains("token keys not read again") }, "the reload was not refused")
        assertJSON(try client.get("/feeds/f", headers: bearer(newToken)))
        XCTAssertEqual(try client.get("/healthz").status, 200)
        // A server without keys logs a SIGHUP, and goes on.
        let plain = try startServer(["--log-level", "notice"])
        kill(plain.pid, SIGHUP)
        XCTAssertTrue(eventually(timeout: 10) { plain.log.contains("SIGHUP: no --jwt-keys or --shapes to read again") }, "the SIGHUP was not told")
        XCTAssertEqual(try plain.client.get("/healthz").status, 200)
    }

    func testABadKeySetStopsTheServerAtStart() throws {
        for (contents, reason) in [
            (keySet([["kty": "oct", "kid": "h1", "k": base64url(Data(repeating: 1, count: 16))]]), "at least 32 bytes"),
            (keySet([["kty": "RSA", "kid": "r1", "n": "AQAB", "e": "AQAB"]]), "is not one of"),
            (keySet([["kty": "oct", "k": base64url(Data(repeating: 1, count: 32))]]), "has no \"kid\""),
            (keySet([["kty": "oct", "kid": "h1", "alg": "HS512", "k": base64url(Data(repeating: 1, count: 32))]]), "is for HS256"),
        ] {
            let run = try CommandRun(["serve", "--port", "0", "--jwt-keys", try keysFile(contents)])
            XCTAssertNotEqual(run.status, 0)
            XCTAssertTrue(run.error.contains(reason), "\(reason): \(run.error)")
        }
    }
}
