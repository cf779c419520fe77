import BatchDiff
import BatchDiffClient
import Foundation
import Synchronization
import XCTest

/// A follower outlives one token (docs/security.md): its ``FollowerConfiguration/tokenProvider``
/// is asked before each request and once more after a 401. With one token string, a minted
/// token's expiry ended the follower, and a new one started again from nothing.
final class FollowerTokenTests: SignedTokenTestCase {
    /// Tokens that the provider hands out in turn, the next one only once the last was
    /// refused, as an app minting tokens when the server refuses one does.
    private final class TokenMint: Sendable {
        private let tokens: [String]
        private let state = Mutex((given: 0, asked: 0, refusals: 0))

        init(_ tokens: [String]) { self.tokens = tokens }

        func token(refused: Bool) -> String {
            state.withLock { state in
                state.asked += 1
                if refused {
                    state.refusals += 1
                    state.given = min(state.given + 1, tokens.count - 1)
                }
                return tokens[state.given]
            }
        }

        var counts: (asked: Int, refusals: Int) { state.withLock { ($0.asked, $0.refusals) } }
    }

    func testAFollowerOutlivesItsTokens() async throws {
        let server = try startServer(["--jwt-keys", try keysFile(keySet())])
        let writer = bearer(token(["feeds": ["*"], "scope": "read write"]))
        assertVersion(try server.client.put("/feeds/t", "[0]", headers: writer))
        // Tokens of two seconds each, one after another.
        let start = now
        let mint = TokenMint((1...8).map { token(["feeds": ["t"], "scope": "read", "exp": start + 2 * Double($0)]) })
        let follower = FeedFollower<JSON, JSON, JSON>(
            FollowerConfiguration(
                serverURL: "http://127.0.0.1:\(server.port)", feed: "t", tokenProvider: { refused in mint.token(refused: refused) },
                transport: SocketTransport(), wait: 30
            )
        ) { $0.identity() }
        let following = Task {
            var seen: [FeedCollection<JSON, JSON>] = []
            for try await update in follower {
                seen.append(update.collection)
                if seen.count == 4 { break }
            }
            return seen
        }
        // Each write after the token the follower held expired.
        for round in 1...3 {
            try await Task.sleep(for: .milliseconds(2_300))
            assertVersion(try server.client.put("/feeds/t", "[\(round)]", headers: writer))
        }
        let seen = try await following.value
        XCTAssertEqual(seen, try (0...3).map { try collection("[\($0)]") })
        XCTAssertGreaterThanOrEqual(mint.counts.refusals, 2, "the follower went on past two expiries")
        XCTAssertGreaterThan(mint.counts.asked, mint.counts.refusals, "asked before each request")
    }

    /// A provider whose new token is refused too: the second 401 in a row ends the follower
    /// with the problem (the provider was asked once more, not in a loop).
    func testATokenRefusedTwiceEndsTheFollower() async throws {
        let server = try startServer(["--jwt-keys", try keysFile(keySet())])
        let mint = TokenMint([token(["feeds": ["t"], "scope": "read", "exp": now - 60])])
        let follower = FeedFollower<JSON, JSON, JSON>(
            FollowerConfiguration(
                serverURL: "http://127.0.0.1:\(server.port)", feed: "t", tokenProvider: { refused in mint.token(refused: refused) },
                transport: SocketTransport()
            )
        ) { $0.identity() }
        do {
            for try await _ in follower { XCTFail("no update with an expired token") }
            XCTFail("the follower ended without an error")
        } catch let problem as ProblemDocument {
            XCTAssertEqual(problem.status, 401)
        }
        XCTAssertEqual(mint.counts.asked, 2)
        XCTAssertEqual(mint.counts.refusals, 1)
    }
}
