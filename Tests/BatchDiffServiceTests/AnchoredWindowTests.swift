import BatchDiff
import Foundation
import TestSupport
import XCTest

/// `changes?since=N&after=<identity>&limit=L` (docs/feeds.md §5.3): the batch from the L
/// rows (sections) after a row in version N to the L after it in the latest, checked by
/// applying it, with the values the server sent, to the window the client held; so a window
/// over a timeline does not slide when rows arrive above it.
final class AnchoredWindowTests: ServerTestCase {
    private typealias Object = [String: Any]

    /// The rows (sections) after the one of identity `anchor` in `rows`; none when it is
    /// not there (version 0).
    private func window(after anchor: Any, in rows: [Object], limit: Int) -> [Object] {
        guard let at = rows.firstIndex(where: { canonicalJSON($0["id"]!) == canonicalJSON(anchor) }) else { return [] }
        return Array(rows.dropFirst(at + 1).prefix(limit))
    }

    /// Applies the anchored window's answer from `since` (whose rows were `old`) to the
    /// window after `anchor` in `old`: it must give the window after `anchor` in `new`.
    private func checkAnchoredWindow(
        _ client: HTTPClient, _ path: String, since: Int, old: [Object], new: [Object], anchor: Any, limit: Int, context: String
    ) throws {
        let query = "since=\(since)&after=\(canonicalJSON(anchor))&limit=\(limit)"
        let answer = assertJSON(try client.get("\(path)/changes?\(query)"))
        let context = "\(context), \(query): \(answer)"
        let start = new.firstIndex { canonicalJSON($0["id"]!) == canonicalJSON(anchor) }.map { $0 + 1 }
        XCTAssertEqual(int(answer["offset"]), start, context)
        XCTAssertEqual((answer["total"] as? Object).flatMap { int($0["new"]) }, new.count, context)
        XCTAssertEqual((answer["total"] as? Object).flatMap { int($0["old"]) }, old.count, context)
        do {
            if answer["sections"] != nil || old.first?["items"] != nil || new.first?["items"] != nil {
                let rebuilt = try decodeSectionedBatch(answer).apply(
                    to: sectionElements(["sections": window(after: anchor, in: old, limit: limit)]), values: try decodeSectionedValues(answer)
                )
                XCTAssertEqual(rebuilt, sectionElements(["sections": window(after: anchor, in: new, limit: limit)]), context)
            } else {
                let rebuilt = try decodeListBatch(answer).apply(to: listElements(window(after: anchor, in: old, limit: limit)), values: try decodeListValues(answer))
                XCTAssertEqual(rebuilt, listElements(window(after: anchor, in: new, limit: limit)), context)
            }
        } catch {
            XCTFail("\(error); \(context)")
        }
    }

    /// Random histories of patches and whole writes (rows inserted above the anchors, moved,
    /// changed, removed, and anchors themselves changed and moved), each window anchored on
    /// a row both versions have, from the version before, three back (through the batches
    /// kept with the versions), 0 and the latest; a removed anchor is 410 `cursor_gone`.
    func testRandomHistoriesThroughAnchoredWindows() throws {
        let client = try startServer(["--max-versions", "10"]).client
        var patches = PatchGenerator(seed: 0xA7_0001)
        var random = SplitMix64(state: 0xA7_0002)
        var fresh = 100_000
        var rows: [Object] = (0..<30).map { _ in
            fresh += 1
            return ["id": fresh, "v": 0]
        }
        var history = [(version: assertVersion(try client.put("/feeds/a", jsonText(rows))), rows: rows)]
        for step in 0..<50 {
            var next = rows
            if step % 2 == 0 {
                let (ops, result) = patches.listPatch(of: rows)
                let answer = assertJSON(try client.request("PATCH", "/feeds/a", body: Array(jsonText(["ops": ops]).utf8)))
                guard answer["changed"] as? Bool == true else { continue }
                next = result
            } else {
                for _ in 0..<(1 + random.below(4)) {
                    let at = random.below(max(1, next.count))
                    switch random.below(4) {
                    case 0:
                        fresh += 1
                        next.insert(["id": fresh, "v": 0], at: random.chance(50) ? 0 : min(at, next.count))
                    case 1 where next.count > 5: next.remove(at: at)
                    case 2 where !next.isEmpty: next[at]["v"] = (next[at]["v"] as? Int ?? 0) + 1
                    case 3 where !next.isEmpty:
                        // Moved and changed: the batch deletes and inserts it.
                        var row = next.remove(at: at)
                        row["v"] = (row["v"] as? Int ?? 0) + 1
                        next.insert(row, at: random.below(next.count + 1))
                    default: break
                    }
                }
                let answer = assertJSON(try client.put("/feeds/a", jsonText(next)))
                guard answer["changed"] as? Bool == true else { continue }
            }
            rows = next
            history.append((history.last!.version + 1, rows))
            for (since, old) in [history[history.count - 2], history[max(0, history.count - 4)], (0, []), history.last!] {
                let ids = Set(rows.map { canonicalJSON($0["id"]!) })
                let anchors = (since == 0 ? rows : old).filter { ids.contains(canonicalJSON($0["id"]!)) }.map { $0["id"]! }
                for anchor in anchors.shuffled(using: &random).prefix(3) {
                    try checkAnchoredWindow(client, "/feeds/a", since: since, old: old, new: rows, anchor: anchor, limit: 1 + random.below(8), context: "step \(step)")
                }
                if let gone = old.first(where: { row in !ids.contains(canonicalJSON(row["id"]!)) })?["id"] {
                    let problem = assertProblem(try client.get("/feeds/a/changes?since=\(since)&after=\(canonicalJSON(gone))&limit=3"), 410, "cursor_gone")
                    XCTAssertTrue((problem["detail"] as? String ?? "").contains("\(canonicalJSON(gone))"), "\(problem)")
                }
            }
            if testRun?.failureCount ?? 0 > 0 { return }
        }
        // Anchors that changed and moved were found in their versions read whole.
        XCTAssertGreaterThan(try XCTUnwrap(try client.metric(#"batchdiff_feed_rows_read_whole_total{for="anchor"}"#)), 0)
    }

    /// Sections: a window of the sections after one, through sections added above it,
    /// changed, moved and removed.
    func testRandomSectionedHistoriesThroughAnchoredWindows() throws {
        let client = try startServer(["--max-versions", "10"]).client
        var patches = PatchGenerator(seed: 0xA7_0003)
        var random = SplitMix64(state: 0xA7_0004)
        var sections: [Object] = []
        var history = [(version: assertVersion(try client.put("/feeds/as?uniqueIdentities=true", jsonText(["sections": sections]))), sections: sections)]
        for step in 0..<60 {
            let (ops, result) = patches.sectionedPatch(of: sections)
            let answer = assertJSON(try client.request("PATCH", "/feeds/as", body: Array(jsonText(["ops": ops]).utf8)))
            guard answer["changed"] as? Bool == true else { continue }
            sections = result
            history.append((history.last!.version + 1, sections))
            let ids = Set(sections.map { canonicalJSON($0["id"]!) })
            for (since, old) in [history[history.count - 2], history[max(0, history.count - 4)], history.last!] {
                for anchor in old.filter({ ids.contains(canonicalJSON($0["id"]!)) }).map({ $0["id"]! }).shuffled(using: &random).prefix(2) {
                    try checkAnchoredWindow(client, "/feeds/as", since: since, old: old, new: sections, anchor: anchor, limit: 1 + random.below(3), context: "step \(step)")
                }
            }
            if testRun?.failureCount ?? 0 > 0 { return }
        }
    }

    /// A timeline sorted newest first: rows arriving above the anchor leave the window as it
    /// was (an empty batch, the window's `offset` moving down); a long poll anchored on a row
    /// waits through them and is answered when a row in its window changes; an event stream
    /// ends with the problem once its anchor is removed.
    func testATimelineWindowDoesNotSlideAndWaitsForItsRows() throws {
        let client = try startServer().client
        var rows = (0..<20).map { ["id": "p\($0)", "t": 1000 - $0] as Object }
        let first = assertVersion(try client.put("/feeds/timeline?orderBy=-t", jsonText(rows.shuffled())))
        @discardableResult
        func patch(_ ops: [Object]) throws -> Int { assertVersion(try client.request("PATCH", "/feeds/timeline", body: Array(jsonText(["ops": ops]).utf8))) }
        let answered = Collector<Object>()
        let done = DispatchSemaphore(value: 0)
        Thread {
            if let response = try? client.get("/feeds/timeline/changes?since=\(first)&after=p4&limit=5&wait=20"),
               let object = try? JSONSerialization.jsonObject(with: Data(response.text.utf8)) as? Object {
                answered.append(object)
            }
            done.signal()
        }.start()
        XCTAssertTrue(eventually(timeout: 10) { (try? client.metric("batchdiff_long_polls_parked")) == 1 })
        // New posts above the anchor: the window stays, the long poll waits on.
        for post in 0..<3 {
            rows.insert(["id": "n\(post)", "t": 2000 + post], at: 0)
            try patch([["op": "upsert", "item": rows[0]]])
        }
        rows.sort { ($0["t"] as! Int) > ($1["t"] as! Int) }
        XCTAssertEqual(done.wait(timeout: .now() + 1), .timedOut, "answered for rows above its window: \(answered.all)")
        let still = assertJSON(try client.get("/feeds/timeline/changes?since=\(first)&after=p4&limit=5"))
        XCTAssertEqual(try decodeListBatch(still).rows.operationCount, 0, "\(still)")
        XCTAssertEqual(int(still["offset"]), 8, "three rows above: the window starts three further down")
        // A row in the window changes: answered, from the first version.
        let latest = try patch([["op": "upsert", "item": ["id": "p6", "t": 994, "seen": true]]])
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        let answer = try XCTUnwrap(answered.all.first)
        XCTAssertEqual(int(answer["from"]), first)
        XCTAssertEqual(int(answer["to"]), latest)
        XCTAssertEqual((answer["rows"] as? Object)?["reloaded"] as? [Int], [1])
        // The anchor removed: 410 naming it, for a long poll and for a stream.
        try patch([["op": "remove", "id": "p4"]])
        let gone = assertProblem(try client.get("/feeds/timeline/changes?since=\(latest)&after=p4&limit=5&wait=5"), 410, "cursor_gone")
        XCTAssertTrue((gone["detail"] as? String ?? "").contains("p4"), "\(gone)")
        let stream = try client.get("/feeds/timeline/changes?since=\(latest)&after=p4&limit=5", headers: ["Accept": "text/event-stream"])
        XCTAssertTrue(stream.text.contains("event: problem") && stream.text.contains("cursor_gone"), stream.text)
    }

    /// What an anchored window refuses: `offset` with `after`, an empty or long anchor.
    func testAnAnchoredWindowsQueryIsChecked() throws {
        let client = try startServer().client
        assertVersion(try client.put("/feeds/l", "[1, 2]"))
        assertProblem(try client.get("/feeds/l/changes?since=0&offset=1&limit=5&after=1"), 400, "invalid_query")
        assertProblem(try client.get("/feeds/l/changes?since=0&limit=5&after="), 400, "invalid_query")
        assertProblem(try client.get("/feeds/l/changes?since=0&limit=5&after=\(String(repeating: "x", count: 1025))"), 400, "invalid_query")
        let answer = assertJSON(try client.get("/feeds/l/changes?since=0&limit=5&after=1"))
        XCTAssertEqual(int(answer["offset"]), 1)
    }
}
