import BatchDiff
import Foundation
import XCTest

/// Versions never repeat (docs/feeds.md §2): a feed's first version starts a new series at
/// the wall clock in microseconds, above every earlier series, so a version or `ETag` names
/// one content of one feed for good, across `DELETE` and restarts. A client holding a
/// version of an earlier series learns it is gone: 410 from `changes`, 200 (never 304) from
/// `If-None-Match`, 412 from `If-Match`.
final class VersionSeriesTests: ServerTestCase {
    /// Microseconds since 1970, the clock a new series starts at.
    private func microseconds() -> Int { Int(Date().timeIntervalSince1970 * 1_000_000) }

    /// Checks that a client holding version `old` of an earlier series of `feed` is told the
    /// feed moved on to `latest`, whose data is `data` (canonical JSON), and that its stale
    /// `If-Match` changes nothing.
    private func assertStale(
        _ client: HTTPClient, feed: String, old: Int, latest: Int, data: String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        XCTAssertLessThan(old, latest, "a new series starts above the old one", file: file, line: line)
        assertVersionGone(try client.get("/feeds/\(feed)/changes?since=\(old)"), latest: latest, file: file, line: line)
        let started = Date()
        assertVersionGone(try client.get("/feeds/\(feed)/changes?since=\(old)&wait=10", timeout: 15), latest: latest, file: file, line: line)
        XCTAssertLessThan(Date().timeIntervalSince(started), 2, "a long poll on an old version waited", file: file, line: line)
        let read = try client.get("/feeds/\(feed)", headers: ["If-None-Match": tag(old)])
        assertVersion(read, latest, file: file, line: line)
        XCTAssertEqual(assertJSON(read, file: file, line: line)["data"].map(canonicalJSON), data,
                       "If-None-Match with an old version gives the new data", file: file, line: line)
        let write = try client.put("/feeds/\(feed)", #"["stale write"]"#, headers: ["If-Match": tag(old)])
        assertProblem(write, 412, "precondition_failed", file: file, line: line)
        let after = try client.get("/feeds/\(feed)")
        assertVersion(after, latest, file: file, line: line)
        XCTAssertEqual(assertJSON(after, file: file, line: line)["data"].map(canonicalJSON), data,
                       "a stale If-Match changed the feed", file: file, line: line)
    }

    /// Checks that `since=0` gives `data` (a list) as inserts only, up to `latest`.
    private func assertEverythingInserted(
        _ client: HTTPClient, feed: String, latest: Int, data: [Any], file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let answer = assertJSON(try client.get("/feeds/\(feed)/changes?since=0"), file: file, line: line)
        XCTAssertEqual(int(answer["from"]), 0, file: file, line: line)
        XCTAssertEqual(int(answer["to"]), latest, file: file, line: line)
        XCTAssertEqual(try decodeListBatch(answer), ListBatch(rows: RowChanges(inserted: Array(0..<data.count)), oldCount: 0, newCount: data.count),
                       file: file, line: line)
        XCTAssertEqual(try decodeListBatch(answer).apply(to: [], values: decodeListValues(answer)), listElements(data), file: file, line: line)
    }

    /// DELETE and a new PUT start a new series above the old one, again and again; every old
    /// version is gone for `changes`, `If-None-Match` and `If-Match`.
    func testARecreatedFeedStartsANewSeriesAboveTheOld() throws {
        let client = try startServer().client
        var oldVersions: [Int] = []
        let first = assertVersion(try client.put("/feeds/x", #"[{"id": 1, "t": "a"}, {"id": 2, "t": "b"}]"#))
        oldVersions += [first, assertVersion(try client.put("/feeds/x", #"[{"id": 2, "t": "b"}, {"id": 1, "t": "a2"}]"#), first + 1)]
        for round in 1...3 {
            XCTAssertEqual(try client.delete("/feeds/x").status, 204)
            assertProblem(try client.get("/feeds/x/changes?since=\(oldVersions.last!)"), 404, "feed_not_found")
            let data: [Any] = [["id": 10 + round, "t": "new \(round)"], ["id": 20 + round, "t": "newer"], "\(round)"]
            let created = try client.put("/feeds/x", jsonText(data))
            let version = assertVersion(created)
            XCTAssertEqual(assertJSON(created)["changed"] as? Bool, true)
            XCTAssertGreaterThan(version, oldVersions.max()!, "round \(round): the new series is not above every old version")
            for old in oldVersions {
                try assertStale(client, feed: "x", old: old, latest: version, data: canonicalJSON(data))
            }
            try assertEverythingInserted(client, feed: "x", latest: version, data: data)
            // The new series goes on by one.
            let next: [Any] = data + ["more"]
            assertVersion(try client.put("/feeds/x", jsonText(next), headers: ["If-Match": tag(version)]), version + 1)
            XCTAssertEqual(try client.get("/feeds/x", headers: ["If-None-Match": tag(version + 1)]).status, 304)
            oldVersions += [version, version + 1]
        }
    }

    /// A new server process starts a new series above the old process's versions.
    func testARestartStartsANewSeriesAboveTheOld() throws {
        let before = try startServer()
        let first = assertVersion(try before.client.put("/feeds/kept", #"[{"id": 1, "t": "a"}]"#))
        let second = assertVersion(try before.client.put("/feeds/kept", #"[{"id": 1, "t": "b"}, {"id": 2, "t": "c"}]"#), first + 1)
        XCTAssertEqual(before.terminate(), 0, "exit status; log:\n\(before.log)")

        let client = try startServer().client
        assertProblem(try client.get("/feeds/kept"), 404, "feed_not_found")
        let data: [Any] = [["id": 1, "t": "after the restart"]]
        let version = assertVersion(try client.put("/feeds/kept", jsonText(data)))
        XCTAssertGreaterThan(version, second, "the new process's series is not above the old one's")
        for old in [first, second] {
            try assertStale(client, feed: "kept", old: old, latest: version, data: canonicalJSON(data))
        }
        try assertEverythingInserted(client, feed: "kept", latest: version, data: data)
    }

    /// `since` newer than the latest names no version of this series: 410 with `latest`, at
    /// once even with a wait (it was a 400 `invalid_query`).
    func testSinceNewerThanTheLatestIsGone() throws {
        let client = try startServer().client
        let first = assertVersion(try client.put("/feeds/ahead", "[1, 2]"))
        for since in [first + 1, first + 1000, versionLimit - 1] {
            assertVersionGone(try client.get("/feeds/ahead/changes?since=\(since)"), latest: first)
        }
        let started = Date()
        assertVersionGone(try client.get("/feeds/ahead/changes?since=\(first + 1)&wait=10", timeout: 15), latest: first)
        XCTAssertLessThan(Date().timeIntervalSince(started), 2, "a since newer than the latest waited")
        // The latest itself is an empty batch.
        let current = assertJSON(try client.get("/feeds/ahead/changes?since=\(first)"))
        XCTAssertEqual(try decodeListBatch(current), ListBatch(rows: RowChanges(), oldCount: 2, newCount: 2))
        // After the next version, its successor is newer than the latest in turn.
        assertVersion(try client.put("/feeds/ahead", "[1, 2, 3]"), first + 1)
        assertVersionGone(try client.get("/feeds/ahead/changes?since=\(first + 2)"), latest: first + 1)
        assertVersionGone(try client.get("/feeds/ahead/changes?since=9007199254740991"), latest: first + 1)
        let next = assertJSON(try client.get("/feeds/ahead/changes?since=\(first)"))
        XCTAssertEqual(int(next["from"]), first)
        XCTAssertEqual(int(next["to"]), first + 1)
    }

    /// A first version is the wall clock in microseconds, below 2^53; each PUT that changes
    /// the content gives the previous version plus one, one that does not gives the same;
    /// a feed created later in the process starts above every version given out.
    func testVersionsStayBelow2To53AndCountUpByOne() throws {
        let client = try startServer().client
        let before = microseconds()
        var previous = assertVersion(try client.put("/feeds/counting", "[0]"))
        let after = microseconds()
        // Same machine, same clock (a second's slack for a clock adjusted meanwhile).
        XCTAssertGreaterThanOrEqual(previous, before - 1_000_000, "the first version is not the wall clock in microseconds")
        XCTAssertLessThanOrEqual(previous, after + 1_000_000, "the first version is not the wall clock in microseconds")
        let first = previous
        var generator = SnapshotGenerator(seed: 0x5E41E5)
        var snapshot: [String: Any] = ["sections": [Any]()]
        var sectionedPrevious = assertVersion(try client.put("/feeds/sectioned", jsonText(snapshot)))
        XCTAssertGreaterThan(sectionedPrevious, previous, "a new feed starts above every version given out")
        for step in 1...20 {
            let written = assertVersion(try client.put("/feeds/counting", jsonText(Array(0...step))), previous + 1)
            XCTAssertLessThan(written, versionLimit)
            previous = written
            assertVersion(try client.put("/feeds/counting", jsonText(Array(0...step))), previous)
            snapshot = generator.nextSectioned(after: snapshot)
            let answer = try client.put("/feeds/sectioned", jsonText(snapshot))
            let changed = assertJSON(answer)["changed"] as? Bool ?? true
            sectionedPrevious = assertVersion(answer, changed ? sectionedPrevious + 1 : sectionedPrevious)
        }
        XCTAssertEqual(previous, first + 20)
        let listed = (assertJSON(try client.get("/feeds"))["feeds"] as? [[String: Any]] ?? []).map { "\($0["feed"] ?? "")@\(int($0["version"]) ?? -1)" }
        XCTAssertEqual(listed, ["counting@\(previous)", "sectioned@\(sectionedPrevious)"])
        let later = assertVersion(try client.put("/feeds/later", "[]"))
        XCTAssertGreaterThan(later, max(previous, sectionedPrevious), "a new feed starts above every version given out")
        XCTAssertLessThan(later, versionLimit)
    }
}
