import BatchDiffFeeds
import BatchDiffJSON
import Foundation
import XCTest

/// A store whose kept batches do not read back, or do not lead to the latest rows (a damaged
/// file, a writer of another build): a window answer is then seen through the whole diff,
/// the same answer as from a store that keeps no batches, never a failure or a trap.
final class StoredBatchFallbackTests: XCTestCase {
    /// The memory store, its kept batches as `damage` leaves them.
    private struct DamagedBatches: FeedStore {
        let store: MemoryFeedStore
        let damage: @Sendable ([[UInt8]]) -> [[UInt8]]?

        func latest(of id: FeedID) async throws(FeedError) -> StoredSnapshot? { try store.latest(of: id) }
        func snapshot(at version: Int, of id: FeedID) async throws(FeedError) -> Snapshot? { try await store.snapshot(at: version, of: id) }
        func batches(of id: FeedID, after since: Int, through latest: Int) async throws(FeedError) -> [[UInt8]]? {
            try await store.batches(of: id, after: since, through: latest).flatMap(damage)
        }
        func append(_ version: NewVersion, to id: FeedID, settings: FeedSettings, after previous: Int?) async throws(FeedError) -> Bool {
            try await store.append(version, to: id, settings: settings, after: previous)
        }
        func keptAnswer(for key: String, of id: FeedID) async throws(FeedError) -> KeptAnswer? { try store.keptAnswer(for: key, of: id) }
        func keep(_ answer: KeptAnswer, for id: FeedID) async throws(FeedError) { try store.keep(answer, for: id) }
        func delete(_ id: FeedID) async throws(FeedError) -> Bool { try store.delete(id) }
        func list(after: FeedID?, prefix: String, limit: Int) async throws(FeedError) -> FeedPage { try store.list(after: after, prefix: prefix, limit: limit) }
        func observe(_ observer: @escaping @Sendable (FeedChange) -> Void) { store.observe(observer) }
        var statistics: FeedStoreStatistics { store.statistics }
        var bytesInMemory: Int { store.bytesInMemory }
    }

    /// The window answer from the first of four versions, on a store damaged by `damage`.
    private func windowAnswer(_ damage: @escaping @Sendable ([[UInt8]]) -> [[UInt8]]?) async throws -> String {
        let feeds = Feeds(store: DamagedBatches(store: MemoryFeedStore(maxVersions: 10, maxBytes: 1 << 24), damage: damage), maxFeedMemory: 1 << 24, clock: { 1_000 })
        let id = try FeedID("w")
        let first = try await feeds.write(Array(#"[{"id":1},{"id":2},{"id":3},{"id":4}]"#.utf8), to: id, idKey: nil, condition: .none)
        for text in [#"[{"id":0},{"id":1},{"id":2},{"id":3},{"id":4}]"#, #"[{"id":0},{"id":2},{"id":3,"v":1},{"id":4}]"#, #"[{"id":4},{"id":0},{"id":2},{"id":3,"v":1}]"#] {
            _ = try await feeds.write(Array(text.utf8), to: id, idKey: nil, condition: .none)
        }
        let answer = try await feeds.changes(of: id, since: first.version, wait: .zero, window: FeedWindow(offset: 1, limit: 2))
        return String(decoding: answer.body, as: UTF8.self)
    }

    func testDamagedBatchesAreSeenThroughTheWholeDiff() async throws {
        let none = try await windowAnswer { _ in nil }
        let garbage = try await windowAnswer { batches in batches.map { _ in [1, 0, 7] } }
        XCTAssertEqual(garbage, none, "batches that do not read back")
        // Batches that read back but lead elsewhere: the first version's batch repeated.
        let wrong = try await windowAnswer { batches in batches.map { _ in batches[0] } }
        XCTAssertEqual(wrong, none, "batches that do not lead to the latest rows")
        let kept = try await windowAnswer { $0 }
        XCTAssertTrue(kept.contains(#""total":{"old":4,"new":4}"#), kept)
    }
}
