import BatchDiff
import Foundation
import TestSupport
import XCTest

/// `changes?...&values=merge` (docs/batch-format.md §6): each reloaded row and updated header
/// comes as `{"merge": <RFC 7396 patch>}` or `{"item": <whole>}`; merged into what the client
/// held, through every kind of answer, it gives the latest exactly.
final class MergeValuesTests: ServerTestCase {
    /// The entries merged, and those carried whole, so far.
    private var entriesSeen = (merge: 0, item: 0)

    /// RFC 7396 §2, on values JSONSerialization read.
    private func merged(_ target: Any?, _ patch: Any) -> Any {
        guard let patch = patch as? [String: Any] else { return patch }
        var result = target as? [String: Any] ?? [:]
        for (key, value) in patch { result[key] = value is NSNull ? nil : merged(result[key], value) }
        return result
    }

    /// The content an entry gives over `old`.
    private func content(of entry: Any, over old: Any) throws -> Any {
        let entry = try XCTUnwrap(entry as? [String: Any], "an entry is an object: \(entry)")
        XCTAssertEqual(entry.count, 1, "\(entry)")
        if let patch = entry["merge"] {
            entriesSeen.merge += 1
            return merged(old, patch)
        }
        entriesSeen.item += 1
        return try XCTUnwrap(entry["item"], "an entry is merge or item: \(entry)")
    }

    /// `answer` (a list feed's, with `values=merge`) with its reloaded entries merged into
    /// `held`'s rows, as a `values=whole` answer would have them.
    private func whole(_ answer: [String: Any], held: [Any]) throws -> [String: Any] {
        var answer = answer
        let reloaded = try XCTUnwrap((answer["rows"] as? [String: Any])?["reloaded"] as? [Int])
        var values = try XCTUnwrap(answer["values"] as? [String: Any])
        var rows = try XCTUnwrap(values["rows"] as? [String: Any])
        let entries = try XCTUnwrap(rows["reloaded"] as? [Any])
        rows["reloaded"] = try zip(reloaded, entries).map { index, entry in try content(of: entry, over: held[index]) }
        values["rows"] = rows
        answer["values"] = values
        return answer
    }

    func testMergedIntoWhatTheClientHeldEveryAnswerGivesTheLatest() throws {
        let client = try startServer().client
        var random = SplitMix64(state: 41)
        var versions: [(version: Int, rows: [Any])] = []
        var current = MergeHistory.first(using: &random)
        for step in 0..<25 {
            if step > 0 { MergeHistory.advance(&current, step: step, using: &random) }
            let written = assertJSON(try client.put("/feeds/merged", jsonText(current)))
            versions.append((try XCTUnwrap(int(written["version"])), current))
            for (version, held) in versions.suffix(4) {
                let answer = assertJSON(try client.get("/feeds/merged/changes?since=\(version)&values=merge"))
                let applied = try decodeListBatch(answer).apply(to: listElements(held), values: try decodeListValues(try whole(answer, held: held)))
                XCTAssertEqual(applied, listElements(current), "since \(version), step \(step): \(answer)")
            }
        }
        // A window, a range and a long poll answer the same way.
        let (older, newer) = (versions[versions.count - 3], versions[versions.count - 2])
        let window = assertJSON(try client.get("/feeds/merged/changes?since=\(older.version)&offset=5&limit=10&values=merge"))
        let slice = { (rows: [Any]) in Array(rows.dropFirst(5).prefix(10)) }
        XCTAssertEqual(
            try decodeListBatch(window).apply(to: listElements(slice(older.rows)), values: try decodeListValues(try whole(window, held: slice(older.rows)))),
            listElements(slice(current)), "\(window)"
        )
        let range = assertJSON(try client.get("/feeds/merged/changes?since=\(older.version)&to=\(newer.version)&values=merge"))
        XCTAssertEqual(
            try decodeListBatch(range).apply(to: listElements(older.rows), values: try decodeListValues(try whole(range, held: older.rows))),
            listElements(newer.rows), "\(range)"
        )
        let latest = versions[versions.count - 1]
        var next = latest.rows
        next[3] = ["id": ((next[3] as? [String: Any])?["id"] as? String) ?? "r3", "only": "this"]
        let woken = Collector<HTTPResult>()
        let path = "/feeds/merged/changes?since=\(latest.version)&wait=10&values=merge"
        Thread {
            if let answer = try? client.get(path, timeout: 15) { woken.append(answer) }
        }.start()
        XCTAssertTrue(eventually(timeout: 5) { (try? client.metric("batchdiff_long_polls_parked")) == 1 }, "not parked")
        assertJSON(try client.put("/feeds/merged", jsonText(next)))
        XCTAssertTrue(eventually(timeout: 10) { woken.all.count == 1 }, "the long poll was not answered")
        let answer = assertJSON(try XCTUnwrap(woken.all.first))
        XCTAssertEqual(try decodeListBatch(answer).apply(to: listElements(latest.rows), values: try decodeListValues(try whole(answer, held: latest.rows))), listElements(next))
        // Both kinds of entry came: patches, and whole rows (nulls, scalars).
        XCTAssertGreaterThan(entriesSeen.merge, 100)
        XCTAssertGreaterThan(entriesSeen.item, 10)
    }

    func testAMergeAnswerCarriesWhatChangedNotTheRow() throws {
        let client = try startServer().client
        let rows = (0..<200).map { id in ["id": id, "title": "row \(id) with a title of some length", "price": id * 3, "tags": ["a", "b"], "owner": "someone"] as [String: Any] }
        let first = assertJSON(try client.put("/feeds/f", jsonText(rows)))
        var changed = rows
        for index in stride(from: 0, to: 200, by: 10) { changed[index]["price"] = -1 }
        assertJSON(try client.put("/feeds/f", jsonText(changed)))
        let since = try XCTUnwrap(int(first["version"]))
        let whole = try client.get("/feeds/f/changes?since=\(since)")
        let merge = try client.get("/feeds/f/changes?since=\(since)&values=merge")
        XCTAssertTrue(merge.text.contains(#"{"merge":{"price":-1}}"#), merge.text)
        // The values say their form; whole ones say nothing, as before merge existed.
        XCTAssertTrue(merge.text.contains(#""values":{"form":"merge","rows":"#), merge.text)
        XCTAssertFalse(whole.text.contains(#""form""#), whole.text)
        XCTAssertLessThan(merge.body.count * 3, whole.body.count, "merge \(merge.body.count) bytes, whole \(whole.body.count)")
        // The two are kept apart by the answer cache.
        XCTAssertEqual(try client.get("/feeds/f/changes?since=\(since)").body, whole.body)
    }

    /// Clients that follow with merge values find the answer for them made with each write,
    /// a PATCH's from the texts it changed and a PUT's from its batch: nothing is read or
    /// diffed when they ask.
    func testAWriteMakesTheMergeAnswerForClientsThatFollowWithMerge() throws {
        let client = try startServer().client
        var rows = (0..<300).map { ["id": $0, "a": 0, "b": "row \($0)"] as [String: Any] }
        let first = assertVersion(try client.put("/feeds/k", jsonText(rows)))
        rows[7]["a"] = 1
        var version = assertVersion(try client.put("/feeds/k", jsonText(rows)))
        // A client follows with merge values: it asks about the latest version so.
        assertJSON(try client.get("/feeds/k/changes?since=\(first)&values=merge"))
        let patch = ["ops": [["op": "merge", "id": 9, "patch": ["a": 2, "b": NSNull()]], ["op": "upsert", "item": ["id": 11, "a": 3]]]]
        let writes: [(String, () throws -> HTTPResult)] = [
            ("PATCH", { try client.request("PATCH", "/feeds/k", body: Array(jsonText(patch).utf8)) }),
            ("PUT", {
                (rows[9], rows[11]) = (["id": 9, "a": 2], ["id": 11, "a": 3])  // as the PATCH left them
                rows[20]["a"] = 5
                rows[21]["c"] = [1]
                return try client.put("/feeds/k", jsonText(rows))
            }),
        ]
        let expected: [[Any]] = [
            [["merge": ["a": 2, "b": NSNull()]], ["merge": ["a": 3, "b": NSNull()]]], [["merge": ["a": 5]], ["merge": ["c": [1]]]],
        ]
        for ((kind, write), entries) in zip(writes, expected) {
            let next = assertVersion(try write())
            let computed = try XCTUnwrap(try client.metric("batchdiff_feed_answers_computed_total"))
            let answer = assertJSON(try client.get("/feeds/k/changes?since=\(version)&values=merge"))
            let values = try XCTUnwrap(answer["values"] as? [String: Any])
            XCTAssertEqual(values["form"] as? String, "merge")
            XCTAssertEqual(canonicalJSON(try XCTUnwrap((values["rows"] as? [String: Any])?["reloaded"])), canonicalJSON(entries), "\(kind): \(answer)")
            XCTAssertEqual(try client.metric("batchdiff_feed_answers_computed_total"), computed, "\(kind): the merge answer was made with the write")
            version = next
        }
    }

    /// A PATCH of a sectioned feed: headers merge from their texts around `items`.
    func testAPatchMakesTheMergeAnswerOfHeadersAndRowsInSections() throws {
        let client = try startServer().client
        let feed: [String: Any] = ["sections": [
            ["id": "a", "title": "A", "note": "n", "items": [["id": 1, "v": 1], ["id": 2, "v": 2]]],
            ["id": "b", "title": "B", "items": [["id": 3, "v": 3]]],
        ]]
        let first = assertVersion(try client.put("/feeds/ks", jsonText(feed)))
        let version = assertVersion(try client.request("PATCH", "/feeds/ks", body: Array(jsonText(["ops": [["op": "upsert", "section": "b", "item": ["id": 3, "v": 4]]]]).utf8)))
        assertJSON(try client.get("/feeds/ks/changes?since=\(first)&values=merge"))
        let ops: [[String: Any]] = [
            ["op": "upsertSection", "item": ["id": "a", "title": "A2"]], ["op": "merge", "section": "a", "id": 2, "patch": ["w": true]],
        ]
        assertVersion(try client.request("PATCH", "/feeds/ks", body: Array(jsonText(["ops": ops]).utf8)))
        let computed = try XCTUnwrap(try client.metric("batchdiff_feed_answers_computed_total"))
        let answer = assertJSON(try client.get("/feeds/ks/changes?since=\(version)&values=merge"))
        XCTAssertEqual(try client.metric("batchdiff_feed_answers_computed_total"), computed, "the merge answer was made with the patch")
        let values = try XCTUnwrap(answer["values"] as? [String: Any])
        XCTAssertEqual(canonicalJSON(try XCTUnwrap((values["sections"] as? [String: Any])?["updated"])), canonicalJSON([["merge": ["title": "A2", "note": NSNull()]]]))
        XCTAssertEqual(canonicalJSON(try XCTUnwrap((values["rows"] as? [String: Any])?["reloaded"])), canonicalJSON([["merge": ["w": true]]]))
    }

    func testSectionHeadersMergeWithoutTheirItems() throws {
        let client = try startServer().client
        let old: [String: Any] = ["sections": [
            ["id": "a", "title": "A", "note": "n", "items": [["id": 1, "v": 1], ["id": 2, "v": 2]]],
            ["id": "b", "title": "B", "items": [["id": 3, "v": 3]]],
        ]]
        let new: [String: Any] = ["sections": [
            ["id": "a", "title": "A2", "items": [["id": 1, "v": 10], ["id": 2, "v": 2]]],
            ["id": "b", "title": "B", "note": NSNull(), "items": [["id": 3, "v": 3, "w": 1]]],
        ]]
        let since = try XCTUnwrap(int(assertJSON(try client.put("/feeds/s", jsonText(old)))["version"]))
        assertJSON(try client.put("/feeds/s", jsonText(new)))
        let answer = assertJSON(try client.get("/feeds/s/changes?since=\(since)&values=merge"))
        let values = try XCTUnwrap(answer["values"] as? [String: Any])
        XCTAssertEqual(canonicalJSON(try XCTUnwrap((values["sections"] as? [String: Any])?["updated"])),
                       canonicalJSON([["merge": ["title": "A2", "note": NSNull()]], ["item": ["id": "b", "title": "B", "note": NSNull()]]]))
        XCTAssertEqual(canonicalJSON(try XCTUnwrap((values["rows"] as? [String: Any])?["reloaded"])),
                       canonicalJSON([["merge": ["v": 10]], ["merge": ["w": 1]]]))
    }

    func testAnEventStreamCarriesMergeValues() throws {
        let client = try startServer().client
        let since = try XCTUnwrap(int(assertJSON(try client.put("/feeds/e", #"[{"id":1,"a":1,"b":2}]"#))["version"]))
        let stream = try EventStreamClient(client, "/feeds/e/changes?since=\(since)&values=merge")
        assertJSON(try client.put("/feeds/e", #"[{"id":1,"a":5,"b":2}]"#))
        let event = try XCTUnwrap(try stream.next())
        XCTAssertEqual(canonicalJSON(try XCTUnwrap((event.object["values"] as? [String: Any])?["rows"])),
                       canonicalJSON(["inserted": [Any](), "reloaded": [["merge": ["a": 5]]]]))
    }

    func testValuesOtherThanWholeOrMergeAreRefused() throws {
        let client = try startServer().client
        assertJSON(try client.put("/feeds/v", "[1]"))
        assertProblem(try client.get("/feeds/v/changes?since=0&values=patch"), 400, "invalid_query")
        assertProblem(try client.get("/feeds/v/changes?since=0&values="), 400, "invalid_query")
        assertProblem(try client.get("/feeds/v/changes?since=0&values=merge&format=steps"), 400, "invalid_query")
        XCTAssertEqual(try client.get("/feeds/v/changes?since=0&values=whole").status, 200)
    }
}
