import BatchDiff
import BatchDiffFeeds
import BatchDiffJSON
import BatchDiffSQLite
import Foundation
import SQLite
import TestSupport
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

    /// What `open` opens (and reads) once the store before has let go of the file: a store
    /// lets go when the last of its calls is released, on its queue's thread, moments after
    /// its last use.
    private func whenReleased<Opened>(_ open: () throws -> Opened) async throws -> Opened {
        for _ in 0..<100 {
            if let opened = try? open() { return opened }
            try await Task.sleep(for: .milliseconds(10))
        }
        return try open()
    }

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
            let feeds = Feeds(store: store, maxFeedMemory: 1 << 20, clock: FeedClock(ContinuousClock(), secondsSince1970: { 5e-4 }))
            for content in ["[1]", "[1,2]", "[2,1,3]", "[3]"] {
                versions.append(try await feeds.write(text(content), to: FeedID("a"), idKey: nil, condition: .none).version)
            }
            _ = try await feeds.write(text(#"{"sections":[{"id":"s","items":[1]}]}"#), to: FeedID("b"), idKey: "key", condition: .none)
            XCTAssertEqual(versions, [500, 501, 502, 503])
            XCTAssertEqual(store.statistics.feeds, 2)
            XCTAssertEqual(store.statistics.versions, 4, "three versions of a, one of b")
        }
        let reopened = try await whenReleased { try SQLiteFeedStore(path: self.path, maxVersions: 3, maxBytes: 1 << 20) }
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

    /// 200 rows, 60 versions changing a few rows or many: the file keeps most versions as
    /// their changes, some whole (when the changes since the last whole one add up); every
    /// retained version reads back as it was written, after the file is opened again too.
    func testVersionsKeptAsChangesReadBackAcrossWholeOnes() async throws {
        var texts: [Int: String] = [:]
        var rows = (0..<200).map { #"{"id":\#($0),"title":"row \#($0)","v":0}"# }
        var generator = SplitMix64(state: 200)
        do {
            let store = try SQLiteFeedStore(path: path, maxVersions: 25, maxBytes: 1 << 24)
            let feeds = Feeds(store: store, maxFeedMemory: 1 << 24)
            for step in 0..<60 {
                for _ in 0..<(step % 10 == 9 ? 80 : 1 + step % 3) {
                    let row = Int.random(in: 0..<rows.count, using: &generator)
                    rows[row] = #"{"id":\#(row),"title":"row \#(row)","v":\#(step + 1)}"#
                }
                if step % 7 == 3 { rows.insert(rows.removeLast(), at: 0) }
                let text = "[" + rows.joined(separator: ",") + "]"
                texts[try await feeds.write(Array(text.utf8), to: FeedID("f"), idKey: nil, condition: .none).version] = text
            }
            for (version, text) in texts.sorted(by: { $0.key < $1.key }).suffix(25) {
                let read = try await store.snapshot(at: version, of: FeedID("f"))
                XCTAssertEqual(read.map { String(decoding: $0.bytes, as: UTF8.self) }, text, "version \(version)")
            }
        }
        let counts = try await whenReleased { () throws -> [Int: (count: Int, largest: Int)] in
            let kinds = try SQLiteConnection(path: self.path).prepare("SELECT delta, count(*), max(length(body)) FROM versions GROUP BY delta")
            var counts: [Int: (count: Int, largest: Int)] = [:]
            while try kinds.step() { counts[kinds.integer(at: 0)] = (kinds.integer(at: 1), kinds.integer(at: 2)) }
            return counts
        }
        XCTAssertGreaterThan(counts[1]?.count ?? 0, 20, "most versions are kept as changes")
        XCTAssertGreaterThan(counts[0]?.count ?? 0, 1, "whole versions now and then")
        XCTAssertLessThan(counts[1]?.largest ?? .max, texts.values.first!.utf8.count / 2)
        let reopened = try await whenReleased { try SQLiteFeedStore(path: self.path, maxVersions: 25, maxBytes: 1 << 24) }
        let latest = try await reopened.latest(of: FeedID("f"))
        XCTAssertEqual(latest.map { String(decoding: $0.snapshot.bytes, as: UTF8.self) }, texts[texts.keys.max()!])
        for (version, text) in texts.sorted(by: { $0.key < $1.key }) {
            let read = try await reopened.snapshot(at: version, of: FeedID("f"))
            let retained = version > texts.keys.max()! - 25
            XCTAssertEqual(read.map { String(decoding: $0.bytes, as: UTF8.self) }, retained ? text : nil, "version \(version)")
        }
    }

    /// A file of schema version 0 (every version whole, as written before versions were kept
    /// as changes, and with no batches) is brought forward when opened, and keeps answering.
    func testAFileOfTheEarlierSchemaIsBroughtForward() async throws {
        do {
            let old = try SQLiteConnection(path: path)
            try old.execute("""
                CREATE TABLE feeds (id TEXT PRIMARY KEY, id_key TEXT NOT NULL, latest INTEGER NOT NULL, unique_identities INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
                CREATE TABLE versions (feed TEXT NOT NULL, version INTEGER NOT NULL, body BLOB NOT NULL, PRIMARY KEY (feed, version)) WITHOUT ROWID;
                INSERT INTO feeds VALUES ('old', 'id', 41, 0);
                INSERT INTO versions VALUES ('old', 40, CAST('[1,2]' AS BLOB)), ('old', 41, CAST('[2,3]' AS BLOB));
                """)
        }
        do {
            let store = try await whenReleased { try SQLiteFeedStore(path: self.path, maxVersions: 5, maxBytes: 1 << 20) }
            let feeds = Feeds(store: store, maxFeedMemory: 1 << 20)
            let changes = try await feeds.changes(of: FeedID("old"), since: 40, wait: .zero)
            XCTAssertEqual(changes.latest, 41)
            let written = try await feeds.write(text("[2,3,4]"), to: FeedID("old"), idKey: nil, condition: .none)
            XCTAssertEqual(written.version, 42)
            let read = try await store.snapshot(at: 40, of: FeedID("old"))
            XCTAssertEqual(read.map { String(decoding: $0.bytes, as: UTF8.self) }, "[1,2]")
            // Versions written before batches were kept have none: windows from them are
            // seen through a diff; the new version keeps its batch.
            let none = try await store.batches(of: FeedID("old"), after: 40, through: 42)
            XCTAssertNil(none)
            let kept = try await store.batches(of: FeedID("old"), after: 41, through: 42)
            guard case .list(let batch)? = try kept.map({ try JSONBatch(stored: XCTUnwrap($0.first)) }) else { return XCTFail("\(String(describing: kept))") }
            XCTAssertEqual(batch, ListBatch(rows: RowChanges(inserted: [2]), oldCount: 2, newCount: 3))
        }
        let schema = try await whenReleased { () throws -> Int in
            let read = try SQLiteConnection(path: self.path).prepare("PRAGMA user_version")
            _ = try read.step()
            return read.integer(at: 0)
        }
        XCTAssertEqual(schema, 3)
        // Versions in a table with rowids, bodies last: a search that meets a whole version
        // reads none of its overflow pages (in a WITHOUT ROWID table it read them all).
        let table = try await whenReleased { () throws -> String in
            let read = try SQLiteConnection(path: self.path).prepare("SELECT sql FROM sqlite_master WHERE name = 'versions'")
            _ = try read.step()
            return read.text(at: 0)
        }
        XCTAssertFalse(table.uppercased().contains("WITHOUT ROWID"), table)
        XCTAssertTrue(table.contains("batch BLOB, body BLOB NOT NULL"), table)
    }
}
