import BatchDiffFeeds
import BatchDiffJSON
import Foundation
import XCTest

/// A store whose kept batches do not read back, or do not lead to the latest rows (a damaged
/// file, a writer of another build): a window answer is then seen through the whole diff,
/// the same answer as from a store that keeps no batches, never a failure or a trap.
final class StoredBatchFallbackTests: XCTestCase {
    /// The window answer from the first of four versions, on a store damaged by `damage`.
    private func windowAnswer(_ damage: @escaping @Sendable ([[UInt8]]) -> [[UInt8]]?) async throws -> String {
        let feeds = Feeds(store: WrappedMemoryStore(MemoryFeedStore(maxVersions: 10, maxBytes: 1 << 24), damage: damage), maxFeedMemory: 1 << 24, clock: FeedClock(ContinuousClock(), secondsSince1970: { 1e-3 }))
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
