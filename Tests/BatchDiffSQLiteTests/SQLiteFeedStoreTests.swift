import BatchDiffFeeds
import BatchDiffJSON
import BatchDiffSQLite
import Foundation
import XCTest

/// The SQLite store behind the feed core, with no server: what one store wrote another
/// reads after reopening the file, appends are conditional, pages come in id order.
final class SQLiteFeedStoreTests: XCTestCase {
    private var path: String!

    override func setUp() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("feeds-\(UUID().uuidString).db").path
    }

    override func tearDown() {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    private func text(_ json: String) -> [UInt8] { Array(json.utf8) }

    /// Text a store kept from before writes refused a repeated member (an object naming
    /// `a` twice) is still read: its feed answers, and takes the next write. A client may no
    /// longer write such text (400 duplicate_member).
    func testAStoredSnapshotWithARepeatedMemberIsStillRead() async throws {
        let store = try SQLiteFeedStore(path: path, maxVersions: 3, maxBytes: 1 << 20)
        let old = try Snapshot(text: text(#"[{"id":1,"a":1,"a":2}]"#), idKey: "id").numbered(7)
        let stored = try await store.append(old, to: FeedID("kept"), settings: FeedSettings(), after: nil)
        XCTAssertTrue(stored)
        let feeds = Feeds(store: store, maxFeedMemory: 1 << 20)
        let latest = try await feeds.latest(of: FeedID("kept"))
        XCTAssertEqual(latest.version, 7)
        let answer = try await latest.answer()
        XCTAssertEqual(answer.bytes.count, latest.answerByteCount)
        let changes = try await feeds.changes(of: FeedID("kept"), since: 0, wait: .zero)
        XCTAssertEqual(changes.latest, 7)
        let written = try await feeds.write(text(#"[{"id":1,"a":3}]"#), to: FeedID("kept"), idKey: nil, condition: .none)
        XCTAssertEqual(written.version, 8)
        do {
            _ = try await feeds.write(text(#"[{"id":1,"a":3,"a":4}]"#), to: FeedID("kept"), idKey: nil, condition: .none)
            XCTFail("a repeated member is written")
        } catch {
            guard case .malformedJSON(let syntax) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(syntax.duplicateMember, #""a""#)
        }
    }

    func testWhatOneStoreWroteTheNextReads() async throws {
        var versions: [Int] = []
        do {
            let store = try SQLiteFeedStore(path: path, maxVersions: 3, maxBytes: 1 << 20)
            let feeds = Feeds(store: store, maxFeedMemory: 1 << 20, clock: { 500 })
            for content in ["[1]", "[1,2]", "[2,1,3]", "[3]"] {
                versions.append(try await feeds.write(text(content), to: FeedID("a"), idKey: nil, condition: .none).version)
            }
            _ = try await feeds.write(text(#"{"sections":[{"id":"s","items":[1]}]}"#), to: FeedID("b"), idKey: "key", condition: .none)
            XCTAssertEqual(versions, [500, 501, 502, 503])
            XCTAssertEqual(store.statistics.feeds, 2)
            XCTAssertEqual(store.statistics.versions, 4, "three versions of a, one of b")
        }
        // The first store lets go of the file when the last of its calls is released, on its
        // queue's thread: moments after the block above.
        var opened: SQLiteFeedStore?
        for _ in 0..<100 where opened == nil {
            opened = try? SQLiteFeedStore(path: path, maxVersions: 3, maxBytes: 1 << 20)
            if opened == nil { try await Task.sleep(for: .milliseconds(10)) }
        }
        let reopened = try XCTUnwrap(opened, "the first store never let go of the file")
        let latest = try await reopened.latest(of: FeedID("a"))
        XCTAssertEqual(latest?.snapshot.version, 503)
        XCTAssertEqual(latest.map { String(decoding: $0.snapshot.bytes, as: UTF8.self) }, "[3]")
        let b = try await reopened.latest(of: FeedID("b"))
        XCTAssertEqual(b?.idKey, "key")
        let evicted = try await reopened.collection(at: 500, of: FeedID("a"))
        XCTAssertNil(evicted, "past --max-versions")
        guard case .list(let items) = try await reopened.collection(at: 502, of: FeedID("a")) else { return XCTFail("version 502 is gone") }
        XCTAssertEqual(items.count, 3)
        XCTAssertEqual(reopened.statistics.versions, 4)

        let moved = try Snapshot(document: JSONDocument(bytes: text("[9]"), collections: .root, idKey: "id"), idKey: "id").numbered(503)
        let stale = try await reopened.append(moved, to: FeedID("a"), settings: FeedSettings(idKey: "id"), after: 502)
        XCTAssertFalse(stale, "an append on a version that is not the latest")
        let created = try await reopened.append(moved.numbered(700), to: FeedID("a"), settings: FeedSettings(idKey: "id"), after: nil)
        XCTAssertFalse(created, "creating a feed that exists")

        let firstPage = try await reopened.list(after: nil, limit: 1)
        XCTAssertEqual(firstPage, FeedPage(feeds: [FeedSummary(id: try FeedID("a"), version: 503)], more: true))
        let secondPage = try await reopened.list(after: FeedID("a"), limit: 1)
        XCTAssertEqual(secondPage.feeds.map(\.id.name), ["b"])
        XCTAssertFalse(secondPage.more)
        let deleted = try await reopened.delete(FeedID("a"))
        let deletedAgain = try await reopened.delete(FeedID("a"))
        XCTAssertTrue(deleted)
        XCTAssertFalse(deletedAgain)
        let gone = try await reopened.latest(of: FeedID("a"))
        XCTAssertNil(gone)
        XCTAssertEqual(reopened.statistics.feeds, 1)
        XCTAssertEqual(reopened.statistics.versions, 1)
    }
}
