import BatchDiff
import BatchDiffClient
import Foundation
import TestSupport
import XCTest

/// The Swift client follows with `values=merge` (docs/clients.md): it merges each patch into
/// the rows it holds, through random histories, and asks whole rows where it cannot merge.
final class MergeFollowerTests: ServerTestCase {
    /// A follower of `feed` on `server`, asking through `transport`, with `values`.
    private func follower<Header: Decodable & Sendable, Item: Decodable & Sendable & Hashable>(
        _ server: ServerProcess, _ feed: String, _ transport: some HTTPTransport, values: FeedValues = .merge,
        header: Header.Type, item: Item.Type, identity: @escaping @Sendable (Item) -> AnyHashable
    ) -> FeedFollower<Header, Item, AnyHashable> {
        FeedFollower(FollowerConfiguration(serverURL: "http://127.0.0.1:\(server.port)", feed: feed, transport: transport, wait: 5, values: values), identity: identity)
    }

    /// The updates of `updates` until the one of `version`.
    private func update<Header, Item, Identity>(
        _ version: Int, of updates: inout FeedFollower<Header, Item, Identity>.Iterator
    ) async throws -> FeedUpdate<Header, Item> {
        while true {
            let next = try await updates.next()
            let update = try XCTUnwrap(next)
            if update.version >= version {
                XCTAssertEqual(update.version, version)
                return update
            }
        }
    }

    func testFollowersThroughARandomHistoryHoldTheLatestMergeAndWholeAlike() async throws {
        let server = try startServer()
        var random = SplitMix64(state: 41)
        var rows = MergeHistory.first(using: &random)
        _ = assertVersion(try server.client.put("/feeds/history", jsonText(rows)))
        let (merging, whole) = (RecordingTransport(), RecordingTransport())
        var merged = follower(server, "history", merging, header: JSON.self, item: JSON.self) { AnyHashable($0.identity()) }.makeAsyncIterator()
        var wholeRows = follower(server, "history", whole, values: .whole, header: JSON.self, item: JSON.self) { AnyHashable($0.identity()) }
            .makeAsyncIterator()
        _ = try await merged.next()
        _ = try await wholeRows.next()
        for step in 1...25 {
            MergeHistory.advance(&rows, step: step, using: &random)
            let version = assertVersion(try server.client.put("/feeds/history", jsonText(rows)))
            let expected = try collection(jsonText(rows))
            let (mergedUpdate, wholeUpdate) = (try await update(version, of: &merged), try await update(version, of: &wholeRows))
            XCTAssertEqual(mergedUpdate.collection, expected, "step \(step), merged")
            XCTAssertEqual(wholeUpdate.collection, expected, "step \(step), whole")
        }
        XCTAssertTrue(merging.asked.allSatisfy { $0.url.contains("values=merge") }, "\(merging.asked.map(\.url))")
        XCTAssertFalse(whole.asked.contains { $0.url.contains("values=") }, "\(whole.asked.map(\.url))")
    }

    /// A team (a section) of players: the app's own `Codable` types, merged through their JSON.
    private struct Team: Codable, Hashable, Sendable {
        var id: String
        var name: String
        var motto: String?
    }

    private struct Player: Codable, Hashable, Sendable {
        var id: Int
        var name: String
        var score: Int
        var nickname: String?
        var tags: [String]?
    }

    func testTheAppsOwnCodableTypesMergeInASectionedFeed() async throws {
        let server = try startServer()
        var random = SplitMix64(state: 7)
        func version(_ step: Int) -> [String: Any] {
            ["sections": ["red", "blue", "green"].enumerated().compactMap { index, team -> [String: Any]? in
                if step % 4 == 3, team == "blue" { return nil }
                var section: [String: Any] = ["id": team, "name": "\(team) \(step % 3)", "items": (0..<4).map { row -> [String: Any] in
                    var player: [String: Any] = ["id": index * 10 + row, "name": "p\(index * 10 + row)", "score": Int.random(in: 0..<3, using: &random) * step]
                    if Int.random(in: 0..<3, using: &random) == 0 { player["nickname"] = "n\(step)" }
                    if Int.random(in: 0..<4, using: &random) == 0 { player["tags"] = ["t\(step % 2)"] }
                    return player
                }]
                if Int.random(in: 0..<2, using: &random) == 0 { section["motto"] = "go \(step)" }
                return section
            }]
        }
        _ = assertVersion(try server.client.put("/feeds/league", jsonText(version(0))))
        let transport = RecordingTransport()
        var updates = follower(server, "league", transport, header: Team.self, item: Player.self) { AnyHashable($0.id) }.makeAsyncIterator()
        _ = try await updates.next()
        for step in 1...16 {
            let body = jsonText(version(step))
            let written = assertVersion(try server.client.put("/feeds/league", body))
            let expected = try JSONDecoder().decode(FeedCollection<Team, Player>.self, from: Data(body.utf8))
            let held = try await update(written, of: &updates).collection
            XCTAssertEqual(held, expected, "step \(step)")
        }
        XCTAssertTrue(transport.asked.allSatisfy { $0.url.contains("values=merge") })
    }

    /// Items that only decode cannot be merged into: their follower asks whole rows.
    private struct Seen: Decodable, Hashable, Sendable {
        var id: Int
        var title: String
    }

    func testAFollowerOfItemsThatOnlyDecodeAsksWholeRows() async throws {
        let server = try startServer()
        _ = assertVersion(try server.client.put("/feeds/plain", #"[{"id": 1, "title": "a"}]"#))
        let transport = RecordingTransport()
        var updates = follower(server, "plain", transport, header: JSON.self, item: Seen.self) { AnyHashable($0.id) }.makeAsyncIterator()
        _ = try await updates.next()
        let written = assertVersion(try server.client.put("/feeds/plain", #"[{"id": 1, "title": "b"}]"#))
        let held = try await update(written, of: &updates).collection
        XCTAssertEqual(held, .list([Seen(id: 1, title: "b")]))
        XCTAssertFalse(transport.asked.contains { $0.url.contains("values=") }, "\(transport.asked.map(\.url))")
    }
}
