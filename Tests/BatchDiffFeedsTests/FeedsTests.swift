import BatchDiff
import BatchDiffFeeds
import BatchDiffJSON
import CGlibcExtras
import Foundation
import TestSupport
import XCTest

/// The feed core on its own, with no server: writes, answers checked by applying them, write
/// conditions, retention, long polls, and a store shared with another writer.
final class FeedsTests: XCTestCase {
    private func document(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// Feeds on a new memory store; every new series of versions starts at `seriesStart`
    /// (when given) microseconds since 1970, else at the system's; waits end on `waits` (when
    /// given), else on the system's continuous clock.
    private func feeds(
        maxVersions: Int = 64, maxBytes: Int = 64 << 20, seriesStart: Int? = nil, waits: ManualClock? = nil
    ) -> (Feeds, MemoryFeedStore) {
        let store = MemoryFeedStore(maxVersions: maxVersions, maxBytes: maxBytes)
        var wall = FeedClock.systemSecondsSince1970
        if let seriesStart { wall = { Double(seriesStart) / 1e6 } }
        let clock = waits.map { FeedClock($0, secondsSince1970: wall) } ?? FeedClock(ContinuousClock(), secondsSince1970: wall)
        return (Feeds(store: store, maxFeedMemory: maxBytes, clock: clock), store)
    }

    /// Microseconds since 1970, as the default clock counts.
    private func microseconds() -> Int { Int(Date().timeIntervalSince1970 * 1_000_000) }

    private func json(_ bytes: [UInt8]) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    /// With the default clock: the first version is the wall clock in microseconds (below
    /// 2^53), each later one the previous plus one.
    func testWritesNumberVersionsAndAnswersFromEveryRetainedVersion() async throws {
        let (feeds, _) = feeds()
        let id = try FeedID("news")
        let before = microseconds()
        let first = try await feeds.write(document(#"[{"id":1,"t":"a"},{"id":2,"t":"b"}]"#), to: id, idKey: nil, condition: .none)
        let after = microseconds()
        XCTAssertGreaterThanOrEqual(first.version, before, "a new series starts at the clock")
        XCTAssertLessThanOrEqual(first.version, after, "a new series starts at the clock")
        XCTAssertLessThan(first.version, 1 << 53)
        XCTAssertTrue(first.changed)
        let second = try await feeds.write(document(#"[{"id":2,"t":"b"},{"id":1,"t":"A"},{"id":3,"t":"c"}]"#), to: id, idKey: nil, condition: .none)
        XCTAssertEqual(second.version, first.version + 1)
        let unchanged = try await feeds.write(document(#"[{"t":"b","id":2},{"id":1,"t":"A"},{"id":3,"t":"c"}]"#), to: id, idKey: nil, condition: .none)
        XCTAssertEqual(unchanged.version, first.version + 1)
        XCTAssertFalse(unchanged.changed, "a snapshot equal as JSON makes no version")

        let answer = try json(await feeds.changes(of: id, since: first.version, wait: .zero).body)
        XCTAssertEqual(answer["from"] as? Int, first.version)
        XCTAssertEqual(answer["to"] as? Int, first.version + 1)
        let rows = try XCTUnwrap(answer["rows"] as? [String: Any])
        XCTAssertEqual(rows["inserted"] as? [Int], [2])
        XCTAssertEqual(rows["reloaded"] as? [Int], [0])
        XCTAssertEqual((rows["moved"] as? [[String: Int]])?.first, ["from": 1, "to": 0])
        let everything = try json(await feeds.changes(of: id, since: 0, wait: .zero).body)
        XCTAssertEqual((everything["rows"] as? [String: Any])?["inserted"] as? [Int], [0, 1, 2])
        let latest = try await feeds.latest(of: id)
        XCTAssertEqual(latest.version, first.version + 1)
        let document = try json(await latest.answer().bytes)
        XCTAssertEqual(document["version"] as? Int, first.version + 1)
    }

    /// Past versions are kept as changes, and whole (compressed) now and then when versions
    /// change much: every retained version reads back as it was written, whichever it is.
    func testEveryRetainedVersionReadsBackFromChangesAndWholeTexts() async throws {
        let (feeds, store) = feeds(maxVersions: 40)
        var rows = (0..<100).map { #"{"id":\#($0),"v":0}"# }
        var texts: [Int: String] = [:]
        var generator = SplitMix64(state: 60)
        for step in 1...60 {
            // A few rows most of the time, a third of them now and then.
            for _ in 0..<(step % 9 == 0 ? 35 : 2) {
                let row = Int.random(in: 0..<rows.count, using: &generator)
                rows[row] = #"{"id":\#(row),"v":\#(step)}"#
            }
            let text = "[" + rows.joined(separator: ",") + "]"
            texts[try await feeds.write(document(text), to: FeedID("f"), idKey: nil, condition: .none).version] = text
        }
        let latest = texts.keys.max()!
        for (version, text) in texts where version > latest - 40 {
            let read = try await store.snapshot(at: version, of: FeedID("f"))
            XCTAssertEqual(read.map { String(decoding: $0.bytes, as: UTF8.self) }, text, "version \(version)")
        }
    }

    /// Patches kept as changes and not read in between (so each is read through the ones
    /// before it, until they pass a text's length and one is written whole), then every
    /// retained version read back through the store's changes back from the latest, and
    /// asked for its `changes`: all as the model, and as a twin feed written whole answers.
    func testPatchedVersionsReadBackAfterLongRunsOfPatches() async throws {
        let (feeds, store) = feeds(maxVersions: 200, seriesStart: 1000)
        let (id, twin) = (try FeedID("patched"), try FeedID("whole"))
        var rows = (0..<300).map { (id: $0, v: 0) }
        func text(_ rows: [(id: Int, v: Int)]) -> String { "[" + rows.map { #"{"id":\#($0.id),"v":\#($0.v)}"# }.joined(separator: ",") + "]" }
        let twinStart = try await feeds.write(document(text(rows)), to: twin, idKey: nil, condition: .none).version
        let start = try await feeds.write(document(text(rows)), to: id, idKey: nil, condition: .none).version
        var texts = [start: text(rows)]
        var nextID = 300
        var generator = SplitMix64(state: 150)
        for step in 1...150 {
            var ops: [String] = []
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                switch Int.random(in: 0..<4, using: &generator) {
                case 0:
                    let index = Int.random(in: 0..<rows.count, using: &generator)
                    rows[index].v = step
                    ops.append(#"{"op":"upsert","item":{"id":\#(rows[index].id),"v":\#(step)}}"#)
                case 1 where rows.count > 2:
                    let row = rows.remove(at: Int.random(in: 0..<rows.count, using: &generator))
                    ops.append(#"{"op":"remove","id":\#(row.id)}"#)
                case 2:
                    let row = rows.remove(at: Int.random(in: 0..<rows.count, using: &generator))
                    let anchor = Int.random(in: 0..<rows.count, using: &generator)
                    rows.insert(row, at: anchor + 1)
                    ops.append(#"{"op":"move","id":\#(row.id),"after":\#(rows[anchor].id)}"#)
                default:
                    let at = Int.random(in: 0...rows.count, using: &generator)
                    let position = at < rows.count ? #""before":\#(rows[at].id)"# : #""at":"end""#
                    rows.insert((nextID, step), at: at)
                    ops.append(#"{"op":"upsert","item":{"id":\#(nextID),"v":\#(step)},\#(position)}"#)
                    nextID += 1
                }
            }
            let write = try await feeds.patch(document(#"{"ops":["# + ops.joined(separator: ",") + "]}"), to: id, condition: .none)
            let whole = try await feeds.write(document(text(rows)), to: twin, idKey: nil, condition: .none)
            XCTAssertEqual(write.version - start, whole.version - twinStart, "step \(step): \(ops)")
            texts[write.version] = text(rows)
        }
        let latest = texts.keys.max()!
        for (version, expected) in texts {
            let read = try await store.snapshot(at: version, of: id)
            XCTAssertEqual(read.map { String(decoding: $0.bytes, as: UTF8.self) }, expected, "version \(version)")
            // (The batch from the version before the latest came from the patch's ops, and
            // may differ from the differ's; the HTTP tests apply it.)
            guard version != latest - 1 else { continue }
            let answers = (try await feeds.changes(of: id, since: version, wait: .zero).body, try await feeds.changes(of: twin, since: version - start + twinStart, wait: .zero).body)
            XCTAssertEqual(try json(answers.0).filter { !["feed", "from", "to"].contains($0.key) } as NSDictionary, try json(answers.1).filter { !["feed", "from", "to"].contains($0.key) } as NSDictionary, "since \(version)")
        }
    }

    /// A patch that changes nothing (a retried one) leaves the next patch the rows it kept:
    /// the next reads only its own ops, not the whole collection again. One whose rows are
    /// equal JSON in another text does not: the next reads the version's text again, and
    /// every version reads back as written.
    func testAPatchThatChangesNothingLeavesTheNextPatchItsRows() async throws {
        let (feeds, store) = feeds()
        let id = try FeedID("retried")
        let rows = (0..<1000).map { #"{"id":\#($0),"v":0}"# }
        func upsert(_ row: Int, _ value: String) -> [UInt8] { document(#"{"ops":[{"op":"upsert","item":{"id":\#(row),"v":\#(value)}}]}"#) }
        func text(_ values: [Int: String]) -> String {
            "[" + (0..<1000).map { row in values[row].map { #"{"id":\#(row),"v":\#($0)}"# } ?? rows[row] }.joined(separator: ",") + "]"
        }
        let first = try await feeds.write(document("[" + rows.joined(separator: ",") + "]"), to: id, idKey: nil, condition: .none)
        _ = try await feeds.patch(upsert(5, "1"), to: id, condition: .none)
        let kept = try await feeds.patch(upsert(6, "1"), to: id, condition: .none)
        XCTAssertEqual(kept.textCount, upsert(6, "1").count, "a patch after a patch reads only its own ops")

        let retried = try await feeds.patch(upsert(6, "1"), to: id, condition: .none)
        XCTAssertEqual(retried.version, kept.version)
        let afterRetry = try await feeds.patch(upsert(7, "1"), to: id, condition: .none)
        XCTAssertEqual(afterRetry.textCount, upsert(7, "1").count, "the patch after one that changed nothing reads only its own ops")

        // A row removed and put back where it was, as it was: nothing changes, the rows are kept.
        let putBack = document(#"{"ops":[{"op":"remove","id":3},{"op":"upsert","item":{"id":3,"v":0},"before":4}]}"#)
        let putBackWrite = try await feeds.patch(putBack, to: id, condition: .none)
        XCTAssertEqual(putBackWrite.version, afterRetry.version)
        let afterPutBack = try await feeds.patch(upsert(9, "3"), to: id, condition: .none)
        XCTAssertEqual(afterPutBack.textCount, upsert(9, "3").count)
        let read = try await store.snapshot(at: afterPutBack.version, of: id)
        XCTAssertEqual(read.map { String(decoding: $0.bytes, as: UTF8.self) }, text([5: "1", 6: "1", 7: "1", 9: "3"]))

        // 1.0 is 1 as JSON: no new version, and the version's text keeps 1.
        let equal = try await feeds.patch(upsert(7, "1.0"), to: id, condition: .none)
        XCTAssertEqual(equal.version, afterPutBack.version)
        let next = try await feeds.patch(upsert(8, "1"), to: id, condition: .none)
        XCTAssertEqual(next.version, first.version + 5)
        let latest = try await store.snapshot(at: next.version, of: id)
        XCTAssertEqual(latest.map { String(decoding: $0.bytes, as: UTF8.self) }, text([5: "1", 6: "1", 7: "1", 8: "1", 9: "3"]))
        let more = try await feeds.patch(upsert(9, "2"), to: id, condition: .none)
        let last = try await store.snapshot(at: more.version, of: id)
        XCTAssertEqual(last.map { String(decoding: $0.bytes, as: UTF8.self) }, text([5: "1", 6: "1", 7: "1", 8: "1", 9: "2"]))
    }

    /// The same for a sectioned feed, a section's header named as well.
    func testASectionedPatchThatChangesNothingLeavesTheNextPatchItsRows() async throws {
        let (feeds, store) = feeds()
        let id = try FeedID("retried-sections")
        func text(_ values: [Int: String], n: String = "1") -> String {
            let sections = ["a", "b", "c"].enumerated().map { index, name in
                let rows = (0..<300).map { row in #"{"id":\#(index * 300 + row),"v":\#(values[index * 300 + row] ?? "0")}"# }
                return #"{"id":"\#(name)","n":\#(name == "b" ? n : "1"),"items":["# + rows.joined(separator: ",") + "]}"
            }
            return #"{"sections":["# + sections.joined(separator: ",") + "]}"
        }
        func patch(_ ops: String) async throws -> FeedWrite { try await feeds.patch(document(#"{"ops":[\#(ops)]}"#), to: id, condition: .none) }
        func upsert(_ row: Int, _ value: String) -> String { #"{"op":"upsert","section":"\#(["a", "b", "c"][row / 300])","item":{"id":\#(row),"v":\#(value)}}"# }
        let first = try await feeds.write(document(text([:])), to: id, idKey: nil, condition: .none)
        _ = try await patch(upsert(5, "1"))
        let header = #"{"op":"upsertSection","item":{"id":"b","n":1}}"#
        let retried = try await patch(upsert(5, "1") + "," + header)
        XCTAssertEqual(retried.version, first.version + 1)
        let afterRetry = try await patch(upsert(305, "1"))
        XCTAssertEqual(afterRetry.textCount, #"{"ops":[\#(upsert(305, "1"))]}"#.utf8.count, "the patch after one that changed nothing reads only its own ops")

        // A header equal as JSON in another text: no new version, the version's text as it was.
        let equal = try await patch(#"{"op":"upsertSection","item":{"id":"b","n":1.0}}"#)
        XCTAssertEqual(equal.version, afterRetry.version)
        let next = try await patch(upsert(605, "1"))
        let latest = try await store.snapshot(at: next.version, of: id)
        XCTAssertEqual(latest.map { String(decoding: $0.bytes, as: UTF8.self) }, text([5: "1", 305: "1", 605: "1"]))
        let more = try await patch(upsert(306, "2"))
        let last = try await store.snapshot(at: more.version, of: id)
        XCTAssertEqual(last.map { String(decoding: $0.bytes, as: UTF8.self) }, text([5: "1", 305: "1", 605: "1", 306: "2"]))
    }

    func testErrorsAreTypedAndChangeNothing() async throws {
        let (feeds, _) = feeds(seriesStart: 1000)
        let id = try FeedID("f")
        XCTAssertThrowsError(try FeedID("a/b")) { XCTAssertEqual($0 as? FeedError, .invalidFeedID("a/b")) }
        await assertThrows(.notFound(id)) { try await feeds.latest(of: id) }
        await assertThrows(.conditionFailed(id, latest: nil)) { try await feeds.write(self.document("[1]"), to: id, idKey: nil, condition: .exists) }
        _ = try await feeds.write(document("[1]"), to: id, idKey: nil, condition: .none)
        await assertThrows(.conditionFailed(id, latest: 1000)) { try await feeds.write(self.document("[2]"), to: id, idKey: nil, condition: .latest(in: [7])) }
        let matched = try await feeds.write(document("[2]"), to: id, idKey: nil, condition: .latest(in: [1000]))
        XCTAssertEqual(matched.version, 1001)
        // Newer than the latest, and below the series: gone, however long the wait.
        await assertThrows(.versionGone(id, since: 1002, latest: 1001)) { try await feeds.changes(of: id, since: 1002, wait: .zero).body }
        await assertThrows(.versionGone(id, since: 9, latest: 1001)) { try await feeds.changes(of: id, since: 9, wait: .zero).body }
        await assertThrows(.versionGone(id, since: (1 << 53) - 1, latest: 1001)) { try await feeds.changes(of: id, since: (1 << 53) - 1, wait: .seconds(30)).body }
        do {
            _ = try await feeds.write(document(#"{"sections":[]}"#), to: id, idKey: nil, condition: .none)
            XCTFail("a list feed took a sectioned snapshot")
        } catch {
            guard case .invalidSnapshot = error else { return XCTFail("\(error)") }
        }
        do {
            _ = try await feeds.write(document("[1,"), to: id, idKey: nil, condition: .none)
            XCTFail("a feed took text that is not JSON")
        } catch {
            guard case .malformedJSON(let syntax) = error, syntax.offset == 3 else { return XCTFail("\(error)") }
        }
        let latest = try await feeds.latest(of: id)
        let document = try json(await latest.answer().bytes)
        XCTAssertEqual(document["version"] as? Int, 1001)
    }

    func testRetentionGivesVersionGoneAndKeepsTheLatest() async throws {
        let (feeds, store) = feeds(maxVersions: 2, seriesStart: 1000)
        let id = try FeedID("r")
        for version in 1000...1003 {
            let written = try await feeds.write(document("[\(version)]"), to: id, idKey: nil, condition: .none)
            XCTAssertEqual(written.version, version)
        }
        await assertThrows(.versionGone(id, since: 1001, latest: 1003)) { try await feeds.changes(of: id, since: 1001, wait: .zero).body }
        XCTAssertEqual(store.statistics.versions, 2)
        let answer = try await feeds.changes(of: id, since: 1002, wait: .zero).body
        XCTAssertEqual(try json(answer)["to"] as? Int, 1003)
    }

    /// A feed deleted and created again starts a new series above every version given out,
    /// even when the clock has not moved (or went back): the old versions are gone, never
    /// read as versions of the new series.
    func testANewSeriesStartsAboveEveryVersionGivenOut() async throws {
        let (feeds, _) = feeds(seriesStart: 1000)
        let id = try FeedID("again")
        for version in 1000...1002 {
            let written = try await feeds.write(document("[\(version)]"), to: id, idKey: nil, condition: .none)
            XCTAssertEqual(written.version, version)
        }
        try await feeds.delete(id)
        let recreated = try await feeds.write(document(#"["new"]"#), to: id, idKey: nil, condition: .none)
        XCTAssertEqual(recreated.version, 1003, "above the old series although the clock still says 1000")
        for old in 1000...1002 {
            await assertThrows(.versionGone(id, since: old, latest: 1003)) { try await feeds.changes(of: id, since: old, wait: .zero).body }
            await assertThrows(.conditionFailed(id, latest: 1003)) {
                try await feeds.write(self.document(#"["stale"]"#), to: id, idKey: nil, condition: .latest(in: [old]))
            }
        }
        let everything = try json(await feeds.changes(of: id, since: 0, wait: .zero).body)
        XCTAssertEqual(everything["from"] as? Int, 0)
        XCTAssertEqual(everything["to"] as? Int, 1003)
        XCTAssertEqual((everything["rows"] as? [String: Any])?["inserted"] as? [Int], [0])
        // Another feed, new in this process, starts above every version seen too.
        let other = try await feeds.write(document("[1]"), to: FeedID("other"), idKey: nil, condition: .none)
        XCTAssertEqual(other.version, 1004)
        // A clock ahead of every version seen wins.
        let (later, _) = self.feeds(seriesStart: 5_000)
        let ahead = try await later.write(document("[1]"), to: id, idKey: nil, condition: .none)
        XCTAssertEqual(ahead.version, 5_000)
    }

    func testANewFeedThatCannotFitIsRefusedAndNothingElseChanges() async throws {
        let (feeds, store) = feeds(maxBytes: 20_000)
        let small = try FeedID("small")
        for version in 1...3 { _ = try await feeds.write(document("[\(version)]"), to: small, idKey: nil, condition: .none) }
        let versions = store.statistics.versions
        let huge = "[" + (0..<1500).map { #"{"id":\#($0),"t":"xxxxxxxxxx"}"# }.joined(separator: ",") + "]"
        let hugeID = try FeedID("huge")
        await assertThrows(.storageFull(hugeID, limit: 20_000)) { try await feeds.write(self.document(huge), to: hugeID, idKey: nil, condition: .none) }
        XCTAssertEqual(store.statistics.versions, versions)
        await assertThrows(.notFound(hugeID)) { try await feeds.latest(of: hugeID) }
    }

    func testALongPollIsWokenByAWriteAndByADeletion() async throws {
        let (feeds, _) = feeds()
        let id = try FeedID("poll")
        let first = try await feeds.write(document("[1]"), to: id, idKey: nil, condition: .none).version
        let poll = Task { try await feeds.changes(of: id, since: first, wait: .seconds(30)).body }
        try await waitUntilParked(feeds)
        let started = ContinuousClock.now
        _ = try await feeds.write(document("[1,2]"), to: id, idKey: nil, condition: .none)
        let woken = try await poll.value
        XCTAssertEqual(try json(woken)["to"] as? Int, first + 1)
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(2))

        let deleted = Task { try await feeds.changes(of: id, since: first + 1, wait: .seconds(30)).body }
        try await waitUntilParked(feeds)
        try await feeds.delete(id)
        do {
            _ = try await deleted.value
            XCTFail("a long poll on a deleted feed answered")
        } catch {
            XCTAssertEqual(error as? FeedError, .notFound(id))
        }
        XCTAssertEqual(feeds.statistics.parkedLongPolls, 0)
        XCTAssertEqual(feeds.statistics.bytes, 0, "a deleted feed holds nothing")
    }

    /// A long poll woken before its deadline leaves nothing behind: before, each wait left a
    /// timer until its deadline (here ten minutes), holding memory for every poll answered
    /// in that time (an event stream waits once per event): 5 MB for these 10,000, against
    /// under 0.2 MB now.
    func testWokenLongPollsLeaveNoTimersBehind() async throws {
        let (feeds, _) = feeds()
        let id = try FeedID("crowd")
        var version = try await feeds.write(document("[0]"), to: id, idKey: nil, condition: .none).version
        func round(_ polls: Int) async throws {
            let since = version
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<polls {
                    group.addTask { _ = try await feeds.changes(of: id, since: since, wait: .seconds(600)) }
                }
                try await self.waitUntilParked(feeds, count: polls)
                version = try await feeds.write(document("[\(since)]"), to: id, idKey: nil, condition: .none).version
                try await group.waitForAll()
            }
        }
        try await round(2000)  // the allocator's and the runtime's first needs
        let before = mallinfo2().uordblks
        for _ in 0..<5 { try await round(2000) }
        let grown = Int(mallinfo2().uordblks) - Int(before)
        XCTAssertLessThan(grown, 1_000_000, "10,000 woken long polls left \(grown) bytes in use")
    }

    /// A version written by another process reaches the store without this core: its long
    /// polls are woken through the store's observers all the same, with the version read
    /// once for all of them.
    func testAVersionFromAnotherWriterWakesLongPolls() async throws {
        let store = WrappedMemoryStore(MemoryFeedStore(maxVersions: 8, maxBytes: 1 << 20), tellsChanges: true)
        let mine = Feeds(store: store, maxFeedMemory: 1 << 20)
        let other = Feeds(store: store, maxFeedMemory: 1 << 20)
        let id = try FeedID("shared")
        let first = try await other.write(document("[1]"), to: id, idKey: nil, condition: .none).version
        let poll = Task { try await mine.changes(of: id, since: first, wait: .seconds(30)) }
        try await waitUntilParked(mine)
        let second = try await other.write(document("[1,2]"), to: id, idKey: nil, condition: .none)
        XCTAssertEqual(second.version, first + 1)
        let woken = try await poll.value
        XCTAssertEqual(try json(woken.body)["to"] as? Int, first + 1)
        await assertThrows(.conditionFailed(id, latest: first + 1)) {
            try await mine.write(self.document("[3]"), to: id, idKey: nil, condition: .latest(in: [first]))
        }
        // This core saw the other writer's versions: a series it starts is above them, even
        // with a clock standing behind.
        let behind = Feeds(store: store, maxFeedMemory: 1 << 20, clock: FeedClock(ContinuousClock(), secondsSince1970: { 1e-6 }))
        _ = try await other.write(document("[1,2,3]"), to: id, idKey: nil, condition: .none)
        let fresh = try await behind.write(document("[1]"), to: FeedID("fresh"), idKey: nil, condition: .none)
        XCTAssertGreaterThan(fresh.version, first + 2)
        // Deleted by the other writer: the parked long poll learns it.
        let parked = Task { try await mine.changes(of: id, since: first + 2, wait: .seconds(30)) }
        try await waitUntilParked(mine)
        try await other.delete(id)
        await assertThrows(.notFound(id)) { _ = try await parked.value }
    }

    func testCloseAnswersParkedLongPollsAtOnce() async throws {
        let (feeds, _) = feeds()
        let id = try FeedID("closing")
        let first = try await feeds.write(document("[1]"), to: id, idKey: nil, condition: .none).version
        let poll = Task { try await feeds.changes(of: id, since: first, wait: .seconds(30)).body }
        try await waitUntilParked(feeds)
        feeds.close()
        let answered = try await poll.value
        XCTAssertEqual(try json(answered)["to"] as? Int, first)
        let started = ContinuousClock.now
        _ = try await feeds.changes(of: id, since: first, wait: .seconds(30)).body
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(2), "after close, a long poll is answered at once")
    }

    /// Returns once a long poll is parked on `feeds`.
    private func waitUntilParked(_ feeds: Feeds, count: Int = 1, file: StaticString = #filePath, line: UInt = #line) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while feeds.statistics.parkedLongPolls < count {
            guard ContinuousClock.now < deadline else { return XCTFail("\(count) long polls did not park within 30 s", file: file, line: line) }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// A write asked for an answer in JSON Patch, which no write answers in, fails and stores
    /// nothing (it stopped the process on a precondition before).
    func testAWriteAskedForAJSONPatchAnswerFails() async throws {
        let (feeds, _) = feeds(seriesStart: 1)
        let id = try FeedID("patch")
        do {
            _ = try await feeds.write(document("[1]"), to: id, idKey: nil, condition: .none, options: AnswerOptions(format: .jsonPatch))
            XCTFail("a write answered in JSON Patch")
        } catch {
            guard case .internalFailure = error else { return XCTFail("\(error)") }
        }
        await assertThrows(.notFound(id)) { try await feeds.latest(of: id) }
    }

    private func assertThrows<Value>(
        _ expected: FeedError, file: StaticString = #filePath, line: UInt = #line, _ body: () async throws -> Value
    ) async {
        do {
            _ = try await body()
            XCTFail("no error; expected \(expected)", file: file, line: line)
        } catch {
            XCTAssertEqual(error as? FeedError, expected, file: file, line: line)
        }
    }
}
