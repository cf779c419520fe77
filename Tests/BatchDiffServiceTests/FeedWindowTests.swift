import BatchDiff
import Foundation
import TestSupport
import XCTest

/// `changes?since=N&offset=O&limit=L` (docs/feeds.md §5.3): the batch that takes a client's
/// window of version N to the same window of the latest, checked by applying it, with the
/// values the server sent, to the window the client held.
final class FeedWindowTests: ServerTestCase {
    private typealias Object = [String: Any]

    /// The windows checked: at the top, across the middle, over the end, past it.
    private func windows(count: Int) -> [(offset: Int, limit: Int)] {
        [(0, 10), (8, 7), (max(0, count - 4), 10), (count + 5, 10), (0, 10_000)]
    }

    /// Applies the window answer of `feed` from `since` (whose rows were `old`) to the
    /// window of `old`; it must give the window of `new`, the latest (version `latest`).
    private func checkWindow(
        _ client: HTTPClient, _ feed: String, since: Int, old: [Object], new: [Object], latest: Int, window: (offset: Int, limit: Int), step: Int
    ) throws {
        let answer = assertJSON(try client.get("/feeds/\(feed)/changes?since=\(since)&offset=\(window.offset)&limit=\(window.limit)"))
        let slice = { (rows: [Object]) in Array(rows.dropFirst(window.offset).prefix(window.limit)) }
        let context = "step \(step), since \(since), window \(window): \(answer)"
        XCTAssertEqual(int(answer["to"]), latest, context)
        XCTAssertEqual(int(answer["from"]), since, context)
        XCTAssertEqual(int(answer["offset"]), window.offset, context)
        let total = answer["total"] as? [String: Any]
        XCTAssertEqual(total.flatMap { int($0["old"]) }, old.count, context)
        XCTAssertEqual(total.flatMap { int($0["new"]) }, new.count, context)
        do {
            let batch = try decodeListBatch(answer)
            let rebuilt = try batch.apply(to: listElements(slice(old)), values: try decodeListValues(answer))
            XCTAssertEqual(rebuilt, listElements(slice(new)), context)
        } catch {
            XCTFail("\(error); \(context)")
        }
    }

    /// Random histories of whole writes and patches, edits at the top, at the end and across
    /// the windows' edges; at each step, every window from the version before, from 0, from
    /// three versions back (the whole batch computed, not kept with a write) and from the latest.
    func testRandomHistoriesThroughWindows() throws {
        let client = try startServer(["--max-versions", "10"]).client
        var patches = PatchGenerator(seed: 0x3D_0001)
        var random = SplitMix64(state: 0x3D_0002)
        var fresh = 100_000
        var rows: [Object] = (0..<30).map { _ in
            fresh += 1
            return ["id": fresh, "v": 0]
        }
        var history = [(version: assertVersion(try client.put("/feeds/w", jsonText(rows))), rows: rows)]
        for step in 0..<60 {
            var next = rows
            if step % 2 == 0 {
                let (ops, result) = patches.listPatch(of: rows)
                let answer = assertJSON(try client.request("PATCH", "/feeds/w", body: Array(jsonText(["ops": ops]).utf8)))
                guard answer["changed"] as? Bool == true else { continue }
                next = result
            } else {
                for _ in 0..<(1 + random.below(4)) {
                    // Where apps change things: the top, the end, the windows' edges, anywhere.
                    let places = [0, next.count - 1, 7, 8, 14, 15, next.count - 4, random.below(max(1, next.count))]
                    let at = max(0, min(places[random.below(places.count)], max(0, next.count - 1)))
                    switch random.below(4) {
                    case 0:
                        fresh += 1
                        next.insert(["id": fresh, "v": 0], at: min(at, next.count))
                    case 1 where !next.isEmpty: next.remove(at: at)
                    case 2 where !next.isEmpty: next[at]["v"] = (next[at]["v"] as? Int ?? 0) + 1
                    case 3 where !next.isEmpty:
                        let row = next.remove(at: at)
                        next.insert(row, at: min(places[random.below(places.count)].clamped(0, next.count), next.count))
                    default: break
                    }
                }
                let answer = assertJSON(try client.put("/feeds/w", jsonText(next)))
                guard answer["changed"] as? Bool == true else { continue }
            }
            rows = next
            let latest = history.last!.version + 1
            history.append((latest, rows))
            let sinces = [history[history.count - 2], (0, []), history[max(0, history.count - 4)], history.last!]
            var patches: [(document: Any, patch: Any)] = []
            var expected: [String] = []
            for window in windows(count: rows.count) {
                for (since, old) in sinces {
                    try checkWindow(client, "w", since: since, old: old, new: rows, latest: latest, window: window, step: step)
                }
                // The window's JSON Patch, applied by an independent implementation.
                let (since, old) = sinces[0]
                let patch = try client.get("/feeds/w/changes?since=\(since)&offset=\(window.offset)&limit=\(window.limit)&format=json-patch")
                XCTAssertEqual(patch.status, 200)
                XCTAssertEqual(patch.header("ETag"), tag(latest))
                patches.append((Array(old.dropFirst(window.offset).prefix(window.limit)), parseJSON(patch.text)))
                expected.append(canonicalJSON(Array(rows.dropFirst(window.offset).prefix(window.limit))))
            }
            XCTAssertEqual(try applyWithJSONPatch(patches).map(canonicalJSON), expected, "step \(step): JSON Patches of windows")
            if testRun?.failureCount ?? 0 > 0 { return }
        }
        // Windows from three versions back were seen through the batches kept with the
        // versions between, never through a diff of the whole versions.
        XCTAssertGreaterThan(try XCTUnwrap(try client.metric(#"batchdiff_feed_window_batches_total{through="versions"}"#)), 50)
        XCTAssertEqual(try client.metric(#"batchdiff_feed_window_batches_total{through="whole"}"#), 0)
    }

    /// Sectioned feeds: windows of whole sections through random patches (sections and rows
    /// added, moved across the window's edges, removed, changed), from the version before,
    /// from 0, from three versions back and from the latest.
    func testRandomSectionedHistoriesThroughWindows() throws {
        let client = try startServer(["--max-versions", "10"]).client
        var patches = PatchGenerator(seed: 0x3D_0003)
        var sections: [Object] = []
        var history = [(version: assertVersion(try client.put("/feeds/sw?uniqueIdentities=true", jsonText(["sections": sections]))), sections: sections)]
        for step in 0..<80 {
            let (ops, result) = patches.sectionedPatch(of: sections)
            let answer = assertJSON(try client.request("PATCH", "/feeds/sw", body: Array(jsonText(["ops": ops]).utf8)))
            guard answer["changed"] as? Bool == true else { continue }
            sections = result
            let latest = history.last!.version + 1
            history.append((latest, sections))
            let sinces = [history[history.count - 2], (0, []), history[max(0, history.count - 4)], history.last!]
            var patches: [(document: Any, patch: Any)] = []
            var expected: [String] = []
            for window in [(0, 2), (1, 3), (max(0, sections.count - 2), 5), (sections.count + 1, 2)] {
                // The window's JSON Patch (its sections replaced whole when anything in them
                // changed), applied by an independent implementation.
                let slice = { (sections: [Object]) in ["sections": Array(sections.dropFirst(window.0).prefix(window.1))] }
                let (since, old) = sinces[2]
                let patch = try client.get("/feeds/sw/changes?since=\(since)&offset=\(window.0)&limit=\(window.1)&format=json-patch")
                XCTAssertEqual(patch.status, 200)
                patches.append((slice(old), parseJSON(patch.text)))
                expected.append(canonicalJSON(slice(sections)))
                for (since, old) in sinces {
                    let query = "since=\(since)&offset=\(window.0)&limit=\(window.1)"
                    let answer = assertJSON(try client.get("/feeds/sw/changes?\(query)"))
                    let slice = { (sections: [Object]) in Array(sections.dropFirst(window.0).prefix(window.1)) }
                    XCTAssertEqual(int(answer["to"]), latest)
                    XCTAssertEqual((answer["total"] as? [String: Any]).flatMap { int($0["new"]) }, sections.count)
                    // With changed members: one list per reloaded row and per updated header.
                    let members = assertJSON(try client.get("/feeds/sw/changes?\(query)&changedMembers=true"))
                    for list in ["rows", "sections"] {
                        let object = members[list] as? [String: Any] ?? [:]
                        let changed = object["changedMembers"] as? [Any] ?? []
                        XCTAssertEqual(changed.count, ((object[list == "rows" ? "reloaded" : "updated"]) as? [Any] ?? []).count, "\(query): \(members)")
                    }
                    do {
                        let batch = try decodeSectionedBatch(answer)
                        let values = try decodeSectionedValues(answer)
                        let rebuilt = try batch.apply(to: sectionElements(["sections": slice(old)]), values: values)
                        XCTAssertEqual(rebuilt, sectionElements(["sections": slice(sections)]), "step \(step), \(query): \(answer)")
                    } catch {
                        XCTFail("step \(step), \(query): \(error); \(answer)")
                    }
                }
            }
            XCTAssertEqual(try applyWithJSONPatch(patches).map(canonicalJSON), expected, "step \(step): JSON Patches of sectioned windows")
            if testRun?.failureCount ?? 0 > 0 { return }
        }
    }

    /// A long poll for a window is answered when its window changes, not when the feed
    /// does elsewhere; `to` names the latest version all the same.
    func testALongPollForAWindowWaitsUntilItsWindowChanges() throws {
        let client = try startServer().client
        let rows = (0..<50).map { ["id": $0, "v": 0] }
        let first = assertVersion(try client.put("/feeds/l", jsonText(rows)))
        let answered = Collector<[String: Any]>()
        let done = DispatchSemaphore(value: 0)
        Thread {
            if let response = try? client.get("/feeds/l/changes?since=\(first)&offset=0&limit=10&wait=20"),
               let object = try? JSONSerialization.jsonObject(with: Data(response.text.utf8)) as? [String: Any] {
                answered.append(object)
            }
            done.signal()
        }.start()
        XCTAssertTrue(eventually(timeout: 10) { (try? client.metric("batchdiff_long_polls_parked")) == 1 })
        // A change below the window: the long poll waits on.
        var changed = rows
        changed[30]["v"] = 1
        assertVersion(try client.put("/feeds/l", jsonText(changed)), first + 1)
        XCTAssertEqual(done.wait(timeout: .now() + 1), .timedOut, "answered for a change outside its window: \(answered.all)")
        // A change in the window: answered, from the first version to the latest.
        changed[3]["v"] = 1
        assertVersion(try client.put("/feeds/l", jsonText(changed)), first + 2)
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        let answer = try XCTUnwrap(answered.all.first)
        XCTAssertEqual(int(answer["from"]), first)
        XCTAssertEqual(int(answer["to"]), first + 2)
        XCTAssertEqual((answer["rows"] as? [String: Any])?["reloaded"] as? [Int], [3])
        // With no change in the window before the wait ends: an empty batch to the latest.
        changed[40]["v"] = 1
        assertVersion(try client.put("/feeds/l", jsonText(changed)), first + 3)
        let quiet = assertJSON(try client.get("/feeds/l/changes?since=\(first + 2)&offset=0&limit=10&wait=1"))
        XCTAssertEqual(int(quiet["to"]), first + 3)
        XCTAssertEqual(try decodeListBatch(quiet).rows.operationCount, 0)
    }

    /// A parked window outlives versions that leave it as it was, however many: each is
    /// the one the next batch is seen from (it was seen from the client's own version, which
    /// they pushed out of retention: a 410 for a window that never changed).
    func testAParkedWindowOutlivesVersionsOutsideIt() throws {
        let client = try startServer(["--max-versions", "3"]).client
        var rows = (0..<50).map { ["id": $0, "v": 0] }
        let first = assertVersion(try client.put("/feeds/o", jsonText(rows)))
        let answered = Collector<HTTPResult>()
        let done = DispatchSemaphore(value: 0)
        Thread {
            if let response = try? client.get("/feeds/o/changes?since=\(first)&offset=0&limit=10&wait=20") { answered.append(response) }
            done.signal()
        }.start()
        XCTAssertTrue(eventually(timeout: 10) { (try? client.metric("batchdiff_long_polls_parked")) == 1 })
        for version in 1...5 {
            rows.append(["id": 100 + version, "v": 0])
            assertVersion(try client.put("/feeds/o", jsonText(rows)), first + version)
        }
        rows[4]["v"] = 1
        assertVersion(try client.put("/feeds/o", jsonText(rows)), first + 6)
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        let answer = assertJSON(try XCTUnwrap(answered.all.first))
        XCTAssertEqual(int(answer["from"]), first, "answered as from the client's version")
        XCTAssertEqual(int(answer["to"]), first + 6)
        XCTAssertEqual((answer["rows"] as? [String: Any])?["reloaded"] as? [Int], [4])
        XCTAssertEqual((answer["total"] as? [String: Any]).flatMap { int($0["old"]) }, 50, "the collection at the client's version")
        XCTAssertEqual((answer["total"] as? [String: Any]).flatMap { int($0["new"]) }, 55)
    }

    /// Past `maxChanges`, the window's rows come as `data`, not the collection's.
    func testMaxChangesReloadsTheWindowOnly() throws {
        let client = try startServer().client
        let first = assertVersion(try client.put("/feeds/m", jsonText((0..<100).map { ["id": $0] })))
        assertVersion(try client.put("/feeds/m", jsonText((0..<100).reversed().map { ["id": $0] })), first + 1)
        let reload = assertJSON(try client.get("/feeds/m/changes?since=\(first)&offset=10&limit=5&maxChanges=2"))
        XCTAssertEqual(reload["reload"] as? Bool, true)
        XCTAssertEqual((reload["data"] as? [[String: Any]])?.compactMap { int($0["id"]) }, [89, 88, 87, 86, 85])
        XCTAssertEqual((reload["counts"] as? [String: Any]).flatMap { int($0["new"]) }, 5)
        // A first window of a new client: its rows, inserted.
        let start = assertJSON(try client.get("/feeds/m/changes?since=0&offset=0&limit=3"))
        XCTAssertEqual((start["rows"] as? [String: Any])?["inserted"] as? [Int], [0, 1, 2])
        XCTAssertEqual(((start["values"] as? [String: Any])?["rows"] as? [String: Any]).flatMap { $0["inserted"] as? [[String: Any]] }?.compactMap { int($0["id"]) }, [99, 98, 97])
    }

    /// An event stream of a window sends an event when its window changes, none for a
    /// version that changes only rows outside it; the steps format takes a window too.
    func testAWindowsStreamAndSteps() throws {
        let client = try startServer(["--event-heartbeat", "30"]).client
        var rows = (0..<30).map { ["id": $0, "v": 0] }
        let first = assertVersion(try client.put("/feeds/e", jsonText(rows)))
        let stream = try EventStreamClient(client, "/feeds/e/changes?since=\(first)&offset=0&limit=5")
        XCTAssertEqual(stream.head.status, 200)
        rows[20]["v"] = 1
        assertVersion(try client.put("/feeds/e", jsonText(rows)), first + 1)
        rows[2]["v"] = 1
        assertVersion(try client.put("/feeds/e", jsonText(rows)), first + 2)
        let event = try XCTUnwrap(try stream.next())
        XCTAssertEqual(event.id, String(first + 2), "no event for the version that left the window as it was")
        let answer = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(event.data.utf8)) as? [String: Any])
        XCTAssertEqual(int(answer["from"]), first + 1, "the stream moved on to the version that left the window as it was")
        XCTAssertEqual((answer["rows"] as? [String: Any])?["reloaded"] as? [Int], [2])
        // Changed members of a window's reloaded rows.
        let members = assertJSON(try client.get("/feeds/e/changes?since=\(first)&offset=1&limit=3&changedMembers=true"))
        XCTAssertEqual((members["rows"] as? [String: Any])?["changedMembers"] as? [[String]], [["v"]])
        // Steps of a window: the row changed in place, with its new content.
        let steps = assertJSON(try client.get("/feeds/e/changes?since=\(first)&offset=1&limit=3&format=steps"))
        XCTAssertEqual(canonicalJSON(steps["steps"]!), canonicalJSON([["op": "change", "at": 1, "count": 1, "values": [["id": 2, "v": 1]]]]))
        XCTAssertEqual(int(steps["to"]), first + 2)
    }

    /// A window's stream through versions that leave its window as it was still writes, once
    /// a heartbeat's time passed: their empty event (a proxy would cut a silent stream, and a
    /// browser's Last-Event-ID would fall out of retention).
    func testAWindowsStreamStaysAliveThroughVersionsOutsideIt() throws {
        let client = try startServer(["--event-heartbeat", "1", "--max-versions", "3"]).client
        var rows = (0..<30).map { ["id": $0, "v": 0] }
        let first = assertVersion(try client.put("/feeds/q", jsonText(rows)))
        let stream = try EventStreamClient(client, "/feeds/q/changes?since=\(first)&offset=0&limit=5")
        for version in 1...8 {
            rows[20]["v"] = version
            assertVersion(try client.put("/feeds/q", jsonText(rows)), first + version)
            usleep(300_000)
        }
        let event = try XCTUnwrap(try stream.next(timeout: 3), "a window's stream went silent while versions came")
        let answer = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(event.data.utf8)) as? [String: Any])
        XCTAssertEqual(try decodeListBatch(answer).rows.operationCount, 0)
        XCTAssertGreaterThan(Int(event.id ?? "") ?? 0, first)
    }

    /// A cursor (`after`) is a page's, not a window's: refused, never answered for the
    /// whole collection.
    /// A `PUT` over a feed whose rows windows read keeps the new version's rows: the window
    /// asked after each of five one-row `PUT`s reads no version whole (it read every row of
    /// the version first, each time), and is the right one.
    func testAWindowAfterAPutReadsNoVersionWhole() throws {
        let client = try startServer().client
        var rows = (0..<1000).map { #"{"id":\#($0),"v":0}"# }
        var version = assertVersion(try client.put("/feeds/w", "[" + rows.joined(separator: ",") + "]"))
        assertJSON(try client.get("/feeds/w/changes?since=0&offset=0&limit=10"))
        let readWhole = #"batchdiff_feed_rows_read_whole_total{for="read"}"#
        XCTAssertEqual(try client.metric(readWhole), 1, "the first window reads the version whole")
        for round in 1...5 {
            rows[round] = #"{"id":\#(round),"v":\#(round)}"#
            let before = version
            version = assertVersion(try client.put("/feeds/w", "[" + rows.joined(separator: ",") + "]"))
            let window = assertJSON(try client.get("/feeds/w/changes?since=\(before)&offset=0&limit=10"))
            XCTAssertEqual(int(window["to"]), version)
            XCTAssertEqual(canonicalJSON(window["values"] ?? [:]), canonicalJSON(["rows": ["inserted": [Any](), "reloaded": [["id": round, "v": round]]]]))
        }
        XCTAssertEqual(try client.metric(readWhole), 1, "a window after a PUT read the version whole")
        XCTAssertEqual(try client.metric(#"batchdiff_feed_rows_read_whole_total{for="write"}"#), 5)
    }
}

private extension Int {
    func clamped(_ low: Int, _ high: Int) -> Int { Swift.min(Swift.max(self, low), high) }
}
