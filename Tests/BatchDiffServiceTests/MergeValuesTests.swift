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

    /// A row of ten members and sometimes a nested object; `step` changes some of them.
    private func row(_ id: Int, step: Int, random: inout SplitMix64) -> Any {
        if step > 0, Int.random(in: 0..<40, using: &random) == 0 { return "r\(id)" }  // a scalar with the row's identity
        var row: [String: Any] = ["id": "r\(id)"]
        for member in 0..<9 { row["m\(member)"] = "value \(member) of \(id)" }
        if Int.random(in: 0..<3, using: &random) == 0 { row["m\(Int.random(in: 0..<9, using: &random))"] = step }
        switch Int.random(in: 0..<12, using: &random) {
        case 0: row["m8"] = NSNull()  // a member set to null: a whole item
        case 1: row["m7"] = nil  // a member removed
        case 2: row["nested"] = ["x": step, "y": ["deep": step % 3]]
        case 3: row["extra"] = [1, NSNull(), step]
        default: break
        }
        return row
    }

    func testMergedIntoWhatTheClientHeldEveryAnswerGivesTheLatest() throws {
        let client = try startServer().client
        var random = SplitMix64(state: 41)
        var versions: [(version: Int, rows: [Any])] = []
        var current = (0..<40).map { row($0, step: 0, random: &random) }
        for step in 0..<25 {
            if step > 0 {
                // One row in ten changed, one removed, one added, two swapped.
                for _ in 0..<4 { let index = Int.random(in: 0..<current.count, using: &random); current[index] = row(index + 100 * step, step: step, random: &random) }
                for index in current.indices where Int.random(in: 0..<10, using: &random) == 0 {
                    current[index] = row(Int(((current[index] as? [String: Any])?["id"] as? String ?? "r0").dropFirst()) ?? 0, step: step, random: &random)
                }
                current.remove(at: Int.random(in: 0..<current.count, using: &random))
                current.insert(row(1000 + step, step: step, random: &random), at: Int.random(in: 0...current.count, using: &random))
                current.swapAt(Int.random(in: 0..<current.count, using: &random), Int.random(in: 0..<current.count, using: &random))
            }
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
