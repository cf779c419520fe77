import Crypto
import Foundation
import XCTest

/// What a second security review found in tokens (docs/security.md §5): times that trap,
/// patterns that match by Unicode equivalence, answers to token holders a shared cache may
/// keep.
final class TokenHardeningTests: SignedTokenTestCase {
    /// A token's `exp` or `nbf` far off (or read as infinity) is a 401 on every route that
    /// waits, by header or by `access_token`, and the process goes on; a valid one far off
    /// waits as asked.
    func testTokenTimesOutsideTheRangeAre401AndNeverStopTheServer() throws {
        let client = try startServer(["--jwt-keys", try keysFile(keySet()), "--write-token", "admin"]).client
        let version = assertVersion(try client.put("/feeds/f", "[1]", headers: bearer("admin")))
        let payloads = [
            #"{"exp":1e17,"feeds":["f"]}"#, #"{"exp":1e300,"feeds":["f"]}"#, #"{"exp":1e999,"feeds":["f"]}"#,
            #"{"exp":9007199254740992,"feeds":["f"]}"#, #"{"exp":-1e999,"feeds":["f"]}"#,
            #"{"exp":4102444800,"nbf":-1e999,"feeds":["f"]}"#, #"{"exp":4102444800,"nbf":-9007199254740992,"feeds":["f"]}"#,
        ]
        for payload in payloads {
            let token = token(payload: Data(payload.utf8))
            for path in ["/feeds/f/changes?since=\(version)&wait=1", "/feeds/f/changes?since=0", "/feeds/f"] {
                assertProblem(try client.get(path, headers: bearer(token)), 401, "invalid_token")
                assertProblem(try client.get(path + (path.contains("?") ? "&" : "?") + "access_token=\(token)"), 401, "invalid_token")
            }
            let stream = try EventStreamClient(client, "/feeds/f/changes?since=\(version)", headers: bearer(token))
            XCTAssertEqual(stream.head.status, 401, payload)
        }
        XCTAssertEqual(try client.get("/healthz").status, 200)
        // Far off but within the range: a long poll and a stream wait as they would.
        let lasting = token(payload: Data(#"{"exp":9007199254740000,"feeds":["f"]}"#.utf8))
        XCTAssertEqual(try client.get("/feeds/f/changes?since=\(version)&wait=1", headers: bearer(lasting)).status, 200)
        XCTAssertEqual(try EventStreamClient(client, "/feeds/f/changes?since=0&access_token=\(lasting)").next()?.type, "message")
        XCTAssertEqual(try client.get("/healthz").status, 200)
    }

    /// A leeway past a day stops the server at start, naming the flag (and its variable).
    func testALeewayPastADayIsRefusedAtStart() throws {
        let keys = try keysFile(keySet())
        for (arguments, environment) in [
            (["--jwt-leeway", "10000000000000000"], [String: String]()), (["--jwt-leeway", "86401"], [:]), ([], ["BATCHDIFF_JWT_LEEWAY": "86401"]),
        ] {
            let run = try CommandRun(["serve", "--port", "0", "--jwt-keys", keys] + arguments, environment: environment)
            XCTAssertNotEqual(run.status, 0)
            XCTAssertTrue(run.error.contains("--jwt-leeway"), run.error)
        }
        let lenient = try startServer(["--jwt-keys", keys, "--jwt-leeway", "86400"]).client
        assertProblem(try lenient.get("/feeds/f", headers: bearer(token(["feeds": ["f"], "exp": now - 600]))), 404, "feed_not_found")
    }

    /// Patterns, ids and audiences compare by bytes: KELVIN SIGN is not K, and a pattern
    /// holding a character no feed id has is a 401 (U+0000 included), listing included.
    func testPatternsAndAudiencesCompareByBytes() throws {
        let client = try startServer(["--jwt-keys", try keysFile(keySet()), "--write-token", "admin", "--jwt-audience", "Kelvin"]).client
        for feed in ["Key", "Kate-private", "Kz"] { assertJSON(try client.put("/feeds/\(feed)", "[1]", headers: bearer("admin"))) }
        for pattern in ["\u{212A}ey", "\u{212A}ate-*", "\u{212A}*", "Key\u{0}", "a\u{0}*", "K e y", "Ke%y", "K\u{301}ey"] {
            let token = token(["feeds": [pattern], "scope": "read write", "aud": "Kelvin"])
            assertProblem(try client.get("/feeds/Key", headers: bearer(token)), 401, "invalid_token")
            assertProblem(try client.delete("/feeds/Kate-private", headers: bearer(token)), 401, "invalid_token")
            assertProblem(try client.get("/feeds", headers: bearer(token)), 401, "invalid_token")
        }
        assertProblem(try client.get("/feeds/Key", headers: bearer(token(["feeds": ["Key"], "aud": "\u{212A}elvin"]))), 401, "invalid_token")
        assertJSON(try client.get("/feeds/Key", headers: bearer(token(["feeds": ["Key"], "aud": "Kelvin"]))))
        let listed = try client.get("/feeds", headers: bearer(token(["feeds": ["K*"], "aud": "Kelvin"]))).object["feeds"] as? [[String: Any]]
        XCTAssertEqual(listed?.compactMap { $0["feed"] as? String }, ["Kate-private", "Key", "Kz"])
        XCTAssertEqual(try client.get("/healthz").status, 200)
    }

    /// `{sub}` in a pattern stands for the token's `sub`: one pattern for every user. A token
    /// whose `sub` is missing, or holds what ids do not (a `*` would widen the pattern), is a 401.
    func testSubInAPatternIsTheTokensSubject() throws {
        let client = try startServer(["--jwt-keys", try keysFile(keySet()), "--write-token", "admin"]).client
        for feed in ["todos-ann", "todos-bob", "todos-ann-work"] { assertJSON(try client.put("/feeds/\(feed)", "[1]", headers: bearer("admin"))) }
        let ann = bearer(token(["feeds": ["todos-{sub}", "notes-{sub}-*"], "sub": "ann"]))
        assertJSON(try client.get("/feeds/todos-ann", headers: ann))
        assertProblem(try client.get("/feeds/todos-bob", headers: ann), 403, "insufficient_scope")
        assertProblem(try client.get("/feeds/todos-ann-work", headers: ann), 403, "insufficient_scope")
        assertJSON(try client.get("/feeds/todos-bob", headers: bearer(token(["feeds": ["todos-{sub}"], "sub": "bob"]))))
        for claims: [String: Any] in [["feeds": ["todos-{sub}"]], ["feeds": ["todos-{sub}"], "sub": "a*"], ["feeds": ["todos-{sub}"], "sub": "a b"], ["feeds": ["todos-{sub}"], "sub": ""]] {
            assertProblem(try client.get("/feeds/todos-ann", headers: bearer(token(claims))), 401, "invalid_token")
        }
    }

    /// Subjects Unicode deems equivalent are two clients; one sub-less token signed twice
    /// (ES256 signs with a fresh nonce) is one.
    func testClientsOfTheStreamLimitAreTheirBytes() throws {
        let client = try startServer(["--jwt-keys", try keysFile(keySet()), "--max-streams-per-client", "1", "--event-heartbeat", "30"]).client
        let version = assertVersion(try client.put("/feeds/f", "[1]", headers: bearer(token(["feeds": ["f"], "scope": "write"]))))
        let path = "/feeds/f/changes?since=\(version)"
        let kelvin = try EventStreamClient(client, path, headers: bearer(token(["sub": "\u{212A}", "feeds": ["f"]])))
        let plainK = try EventStreamClient(client, path, headers: bearer(token(["sub": "K", "feeds": ["f"]])))
        XCTAssertEqual([kelvin.head.status, plainK.head.status], [200, 200])
        let claims: [String: Any] = ["feeds": ["f"], "exp": (now + 3600).rounded()]
        let first = token(claims, alg: "ES256", kid: "p1")
        let second = token(claims, alg: "ES256", kid: "p1")
        XCTAssertNotEqual(first, second, "ES256 signs with a fresh nonce")
        let firstStream = try EventStreamClient(client, path, headers: bearer(first))
        XCTAssertEqual(firstStream.head.status, 200)
        assertProblem(try client.get(path + "&wait=5", headers: bearer(second)), 429, "too_many_streams")
    }

    /// Every answer to a request a token let in (signed, static or `access_token`) says
    /// `private` (or `no-store`): feeds, pages, the listing, 304s, writes; not the reads of
    /// a public feed (`--public-feeds`), nor without a token.
    func testAnswersToTokenHoldersArePrivate() throws {
        let keys = try keysFile(keySet())
        let signed = token(["feeds": ["*"], "scope": "read write"])
        for publicFeeds in [false, true] {
            let server = try startServer(["--jwt-keys", keys, "--read-token", "reader", "--write-token", "admin"] + (publicFeeds ? ["--public-feeds"] : []))
            let client = server.client
            let write = try client.put("/feeds/f", "[1,2]", headers: bearer("admin"))
            let version = assertVersion(write)
            var answers = [("PUT", write)]
            for (name, headers, query) in [("signed", bearer(signed), ""), ("static", bearer("reader"), ""), ("query", [:], "access_token=\(signed)")] {
                let join = { (path: String) in path + (query.isEmpty ? "" : (path.contains("?") ? "&" : "?") + query) }
                answers += [
                    ("\(name) feed", try client.get(join("/feeds/f"), headers: headers)),
                    ("\(name) page", try client.get(join("/feeds/f?limit=1"), headers: headers)),
                    ("\(name) 304", try client.get(join("/feeds/f"), headers: headers.merging(["If-None-Match": "\"\(version)\""]) { $1 })),
                    ("\(name) changes", try client.get(join("/feeds/f/changes?since=0"), headers: headers)),
                    ("\(name) stream", try EventStreamClient(client, join("/feeds/f/changes?since=0"), headers: headers).head),
                ]
                if name != "query" { answers.append(("\(name) listing", try client.get("/feeds", headers: headers))) }
            }
            for (name, answer) in answers {
                let caching = answer.header("Cache-Control") ?? ""
                let restricted = caching.contains("private") || caching.contains("no-store")
                // A public feed's reads are public; a write's answer and the listing stay the token holder's.
                let isFeedRead = !name.hasSuffix("listing") && name != "PUT"
                XCTAssertEqual(restricted, !(publicFeeds && isFeedRead), "\(name): Cache-Control \(caching.debugDescription), public feeds \(publicFeeds)")
            }
        }
        let open = try startServer().client
        _ = assertVersion(try open.put("/feeds/f", "[1]"))
        XCTAssertNil(try open.get("/feeds/f").header("Cache-Control"))
    }

    /// Ed25519 `x`s that are no key of the prime-order group: a placeholder of zeros, the
    /// identity, (0, -1), a point of order 8, a mixed-order point, y = p.
    private let unsafeEd25519Keys = [
        String(repeating: "00", count: 32), "01" + String(repeating: "00", count: 31), "ec" + String(repeating: "ff", count: 30) + "7f",
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", "98519eadf35b995233b51b5cd23e9cc5a28b639b5a4af0ec903cb960d81b7819",
        "ed" + String(repeating: "ff", count: 30) + "7f",
    ]

    private func bytes(hex: String) -> Data {
        let nibbles = hex.utf8.map { $0 <= 57 ? $0 - 48 : ($0 | 0x20) - 87 }
        return Data(stride(from: 0, to: nibbles.count, by: 2).map { nibbles[$0] << 4 | nibbles[$0 + 1] })
    }

    private func unsafeKeySet(_ hex: String) -> Data {
        keySet([["kty": "OKP", "crv": "Ed25519", "kid": "placeholder", "x": base64url(bytes(hex: hex))]])
    }

    /// Such a key stops the server at start, naming it, and is refused on SIGHUP (the keys
    /// in force stay); a token forged for it (R the identity, S zero) gets nothing.
    func testEd25519KeysOutsideThePrimeOrderGroupAreRefused() throws {
        for hex in unsafeEd25519Keys {
            let run = try CommandRun(["serve", "--port", "0", "--jwt-keys", try keysFile(unsafeKeySet(hex))])
            XCTAssertNotEqual(run.status, 0, hex)
            XCTAssertTrue(run.error.contains("\"placeholder\""), "\(hex): \(run.error)")
        }
        let path = try keysFile(keySet())
        let server = try startServer(["--jwt-keys", path, "--write-token", "admin"])
        let client = server.client
        assertJSON(try client.put("/feeds/f", "[1]", headers: bearer("admin")))
        let good = token(["feeds": ["f"]], alg: "EdDSA", kid: "e1")
        try unsafeKeySet(unsafeEd25519Keys[0]).write(to: URL(fileURLWithPath: path))
        kill(server.pid, SIGHUP)
        Thread.sleep(forTimeInterval: 0.5)
        assertJSON(try client.get("/feeds/f", headers: bearer(good)))
        let forged = token(["feeds": ["*"], "scope": "read write"], alg: "EdDSA", kid: "placeholder") { _ in
            self.bytes(hex: "01" + String(repeating: "00", count: 63))
        }
        assertProblem(try client.get("/feeds/f", headers: bearer(forged)), 401, "invalid_token")
        // A small-order R with the server's own key verifies nothing either.
        let smallR = token(["feeds": ["f"]], alg: "EdDSA", kid: "e1") { _ in self.bytes(hex: "01" + String(repeating: "00", count: 63)) }
        assertProblem(try client.get("/feeds/f", headers: bearer(smallR)), 401, "invalid_token")
    }

    /// An ES256 signature counts in its low-S form only: its malleated twin is a 401.
    func testES256SignaturesAreTakenInLowSFormOnly() throws {
        let client = try startServer(["--jwt-keys", try keysFile(keySet()), "--write-token", "admin"]).client
        assertJSON(try client.put("/feeds/f", "[1]", headers: bearer("admin")))
        let good = token(["feeds": ["f"]], alg: "ES256", kid: "p1")
        let parts = good.split(separator: ".").map(String.init)
        let base64 = parts[2].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let signature = try XCTUnwrap(Data(base64Encoded: base64 + String(repeating: "=", count: (4 - base64.count % 4) % 4)))
        XCTAssertEqual(signature.count, 64)
        let twin = parts[0] + "." + parts[1] + "." + base64url(malleated(signature))
        assertJSON(try client.get("/feeds/f", headers: bearer(good)))
        assertProblem(try client.get("/feeds/f", headers: bearer(twin)), 401, "invalid_token")
    }

    /// `invalid_token` details name none of the server's kids, nor what they sign with.
    func testInvalidTokenDetailsNameNoKeyOfTheServer() throws {
        let client = try startServer(["--jwt-keys", try keysFile(keySet())]).client
        for token in [token([:], kid: "h9"), token([:], alg: "HS256", kid: "e1"), token([:], alg: "EdDSA", kid: "h1"), token([:], alg: "ES256", kid: "e1")] {
            let refused = try client.get("/feeds/f", headers: bearer(token))
            assertProblem(refused, 401, "invalid_token")
            let detail = refused.object["detail"] as? String ?? ""
            for secret in ["h1", "e1", "p1", "HS256", "EdDSA", "ES256"] { XCTAssertFalse(detail.contains(secret), detail) }
        }
    }
}
