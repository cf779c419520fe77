import BatchDiffClient
import Foundation
import XCTest

/// The steps format (docs/batch-format.md §7) through the server: applied by an adapter
/// written here (positions as each step finds the list), on the seed example and on random
/// feed versions, lists and sections.
final class StepsFormatTests: ServerTestCase {
    /// The flat list an adapter shows: a list's items, or each section's header (the section
    /// without `items`) followed by its items, as canonical JSON texts.
    private func flat(_ collection: Any) -> [String] {
        if let items = collection as? [Any] { return items.map(canonicalJSON) }
        let sections = (collection as? [String: Any])?["sections"] as? [[String: Any]] ?? []
        return sections.flatMap { section -> [String] in
            var header = section
            header["items"] = nil
            return [canonicalJSON(header)] + ((section["items"] as? [Any]) ?? []).map(canonicalJSON)
        }
    }

    /// Applies `steps` to `old`; inserted and changed positions take the step's `values`
    /// (or, without values, a placeholder).
    private func apply(_ steps: [[String: Any]], to old: [String]) throws -> [String] {
        var list = old
        for step in steps {
            let values = (step["values"] as? [Any])?.map(canonicalJSON)
            switch step["op"] as? String {
            case "remove":
                let at = step["at"] as! Int, count = step["count"] as! Int
                list.removeSubrange(at..<(at + count))
            case "insert":
                let at = step["at"] as! Int, count = step["count"] as! Int
                list.insert(contentsOf: values ?? Array(repeating: "inserted", count: count), at: at)
            case "move":
                list.insert(list.remove(at: step["from"] as! Int), at: step["to"] as! Int)
            case "change":
                let at = step["at"] as! Int, count = step["count"] as! Int
                list.replaceSubrange(at..<(at + count), with: values ?? Array(repeating: "changed", count: count))
            default:
                XCTFail("unknown step \(step)")
            }
        }
        return list
    }

    func testTheListExampleAndBadFormats() throws {
        let client = try startServer().client
        let answer = assertJSON(try client.post("/diff", #"{"old": ["a", "b", "c", "d"], "new": ["d", "a", "b", "e"], "options": {"format": "steps"}}"#))
        XCTAssertEqual(canonicalJSON(answer), canonicalJSON(parseJSON(#"""
            {"steps": [{"op": "remove", "at": 2, "count": 1}, {"op": "move", "from": 2, "to": 0}, {"op": "insert", "at": 3, "count": 1}],
             "counts": {"old": 4, "new": 4}}
            """#)))
        XCTAssertEqual(try apply(answer["steps"] as! [[String: Any]], to: flat(["a", "b", "c", "d"])), [#""d""#, #""a""#, #""b""#, "inserted"])
        for format in [#""STEPS""#, #""""#, "null", "3"] {
            assertProblem(try client.post("/diff", #"{"old": [], "new": [], "options": {"format": \#(format)}}"#), 400, "invalid_option")
        }
        assertProblem(try client.post("/diff", #"{"old": [], "new": [], "options": {"format": "json-patch", "changedMembers": true}}"#), 400, "invalid_option")
        _ = assertVersion(try client.put("/feeds/f", "[1]"))
        assertProblem(try client.get("/feeds/f/changes?since=0&format=json-patch&changedMembers=true"), 400, "invalid_query")
        assertProblem(try client.get("/feeds/f/changes?since=0&format=Steps"), 400, "invalid_query")
        // maxChanges applies to every format.
        let reload = assertJSON(try client.post("/diff", #"{"old": [1, 2], "new": [3], "options": {"format": "steps", "maxChanges": 2}}"#))
        XCTAssertEqual(reload["reload"] as? Bool, true)
    }

    /// `changedMembers` with `format=steps` (it was a 400): each change step carries one
    /// entry per position it covers, the names of the members that changed there (`null`
    /// for a row that is not an object), as Android's change payloads want them; section
    /// headers count as positions of the flat list, `items` never a member.
    func testChangeStepsCarryTheirChangedMembers() throws {
        let client = try startServer().client
        let list = assertJSON(try client.post("/diff", #"""
            {"old": [{"id": 1, "a": 1, "b": 1}, {"id": 2, "a": 1}, "x", {"id": 3, "a": 1}],
             "new": [{"id": 1, "a": 2, "b": 1}, {"id": 2, "a": 1, "c": 1}, {"id": 3, "a": 1}, {"id": 9}],
             "options": {"format": "steps", "changedMembers": true}}
            """#))
        let changes = (list["steps"] as? [[String: Any]] ?? []).filter { $0["op"] as? String == "change" }
        XCTAssertEqual(changes.count, 1, "\(list)")
        XCTAssertEqual(changes.first?["at"] as? Int, 0)
        XCTAssertEqual(changes.first?["count"] as? Int, 2)
        XCTAssertEqual(canonicalJSON(changes.first?["changedMembers"] ?? NSNull()), canonicalJSON([["a"], ["c"]]))

        // Sectioned, through a feed: a header changed, a row changed, another section inserted.
        let first = assertVersion(try client.put("/feeds/s", #"{"sections": [{"id": "A", "t": 1, "items": [{"id": 1, "v": 1}, {"id": 2, "v": 1}]}]}"#))
        assertVersion(try client.put("/feeds/s", #"{"sections": [{"id": "B", "items": []}, {"id": "A", "t": 2, "items": [{"id": 1, "v": 2, "w": 0}, {"id": 2, "v": 1}]}]}"#), first + 1)
        let answer = assertJSON(try client.get("/feeds/s/changes?since=\(first)&format=steps&changedMembers=true"))
        var named: [Int: Any] = [:]
        for step in answer["steps"] as? [[String: Any]] ?? [] where step["op"] as? String == "change" {
            let at = step["at"] as? Int ?? -1
            let entries = step["changedMembers"] as? [Any] ?? []
            XCTAssertEqual(entries.count, step["count"] as? Int, "one entry per position: \(step)")
            for (offset, entry) in entries.enumerated() { named[at + offset] = entry }
        }
        // The flat list: B's header (0), A's header (1), row 1 (2), row 2 (3).
        XCTAssertEqual(canonicalJSON(named[1] ?? NSNull()), canonicalJSON(["t"]), "\(answer)")
        XCTAssertEqual(canonicalJSON(named[2] ?? NSNull()), canonicalJSON(["v", "w"]), "\(answer)")
        XCTAssertEqual(named.count, 2, "\(answer)")
    }

    /// From each of the last versions (and from nothing), the steps with their values turn
    /// the client's flat list into the latest one exactly.
    func testStepsOfRandomFeedVersionsApply() throws {
        let client = try startServer(["--max-versions", "64"]).client
        for sectioned in [false, true] {
            let feed = sectioned ? "sections" : "list"
            var generator = SnapshotGenerator(seed: sectioned ? 5 : 6)
            var snapshot: Any = sectioned ? ["sections": []] as [String: Any] : [] as [Any]
            var held: [(version: Int, flat: [String])] = [(0, [])]
            for _ in 0..<24 {
                snapshot = sectioned ? generator.nextSectioned(after: snapshot as! [String: Any]) : generator.nextList(after: snapshot as! [Any])
                let text = jsonText(snapshot)
                let version = assertVersion(try client.put("/feeds/\(feed)", text))
                let latest = flat(parseJSON(text))
                for (since, old) in [held[0]] + held.dropFirst().suffix(4) {
                    let answer = assertJSON(try client.get("/feeds/\(feed)/changes?since=\(since)&format=steps"))
                    XCTAssertNil(answer["values"])
                    let steps = answer["steps"] as? [[String: Any]] ?? []
                    XCTAssertEqual(try apply(steps, to: old), latest, "\(feed) from \(since) to \(version): \(steps)")
                }
                held.append((version, latest))
            }
        }
    }

    /// The client's steps (`FeedSteps`): a feed's steps answer decoded, each step applied to
    /// the adapter's flat list and told to it, change steps with their payloads (the changed
    /// members), as `DiffUtil.ItemCallback.getChangePayload` would give them.
    func testTheClientHandsChangePayloadsToTheAdapter() throws {
        let client = try startServer().client
        let old = #"{"sections": [{"id": "A", "t": 1, "items": [{"id": 1, "v": 1}, {"id": 2, "v": 1}]}]}"#
        let new = #"{"sections": [{"id": "B", "items": []}, {"id": "A", "t": 2, "items": [{"id": 1, "v": 2, "w": 0}, {"id": 2, "v": 1}]}]}"#
        let first = assertVersion(try client.put("/feeds/p", old))
        assertVersion(try client.put("/feeds/p", new), first + 1)
        let answer = try client.get("/feeds/p/changes?since=\(first)&format=steps&changedMembers=true")
        let steps = try JSONDecoder().decode(FeedSteps<JSON>.self, from: Data(answer.text.utf8))
        XCTAssertEqual(steps.to, first + 1)
        // The adapter's flat list: each section's header (without `items`), then its rows.
        let flat = { (text: String) throws -> [JSON] in
            guard case .sectioned(let sections) = try collection(text) else { return [] }
            return sections.flatMap { [$0.header] + $0.items }
        }
        var list = try flat(old)
        let adapter = AdapterDouble(count: list.count)
        steps.perform(on: adapter, apply: { list = (try? $0.applied(to: list)) ?? [] }, reload: { XCTFail("not a reload") })
        XCTAssertEqual(list, try flat(new))
        XCTAssertEqual(adapter.payloads[1], ["t"], "the header's changed member: \(adapter.payloads)")
        XCTAssertEqual(adapter.payloads[2], ["v", "w"], "row 1's: \(adapter.payloads)")
        XCTAssertEqual(adapter.payloads.count, 2)
        XCTAssertEqual(adapter.inserted, 1, "section B's header")
        // An adapter that drifted (one position short) is reloaded, not stepped; a step that
        // does not fit a list is an error, never a trap.
        let drifted = AdapterDouble(count: 2)
        var reloaded = false
        steps.perform(on: drifted, apply: { _ in XCTFail("stepped a drifted adapter") }, reload: { reloaded = true })
        XCTAssertTrue(reloaded)
        XCTAssertThrowsError(try FeedStep<JSON>.remove(at: 5, count: 1).applied(to: [1, 2, 3]))
        XCTAssertThrowsError(try FeedStep<JSON>.move(from: 0, to: 3).applied(to: [1, 2, 3]))
    }
}

/// An adapter that counts what it is told, and keeps each changed position's payload.
private final class AdapterDouble: StepUpdatable {
    var payloads: [Int: [String]?] = [:]
    var inserted = 0
    let itemCount: Int

    init(count: Int) {
        itemCount = count
    }

    func notifyItemRangeRemoved(_ positionStart: Int, _ itemCount: Int) {}
    func notifyItemMoved(_ fromPosition: Int, _ toPosition: Int) {}
    func notifyItemRangeInserted(_ positionStart: Int, _ itemCount: Int) { inserted += itemCount }
    func notifyItemRangeChanged(_ positionStart: Int, _ itemCount: Int, payloads: [[String]?]?) {
        for (offset, payload) in (payloads ?? []).enumerated() { self.payloads[positionStart + offset] = payload }
    }
    func notifyDataSetChanged() {}
}
