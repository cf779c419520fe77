import Foundation
import TestSupport
import XCTest

/// `changedMembers` and `maxChanges` (docs/batch-format.md §6) on `POST /diff`, a feed's
/// `PUT` and `changes`: the seed example, hand cases, random cases, bad values.
final class AnswerOptionsTests: ServerTestCase {
    private func diff(_ client: HTTPClient, _ body: Any, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        assertJSON(try client.post("/diff", jsonText(body)), file: file, line: line)
    }

    private func rows(_ answer: [String: Any]) -> [String: Any] { answer["rows"] as? [String: Any] ?? [:] }

    /// Names sorted by Unicode code points, as the answers sort them.
    private func sortedByCodePoints(_ names: [String]) -> [String] {
        names.sorted { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) { $0.value < $1.value } }
    }

    /// The companies example: iPad, iPhone and iPod change their titles.
    func testChangedMembersOfTheCompaniesExample() throws {
        let client = try startServer().client
        func product(_ id: String, _ title: String) -> [String: Any] { ["id": id, "title": title] }
        func company(_ name: String, _ items: [[String: Any]]) -> [String: Any] { ["id": name, "items": items] }
        let old: [String: Any] = ["sections": [
            company("Amazon", [product("kindle", "Kindle"), product("kindle-fire", "Kindle Fire")]),
            company("Apple", [product("ipad", "iPad"), product("iphone", "iPhone"), product("ipod", "iPod")]),
        ]]
        var apple = company("Apple", [product("ipad", "New iPad"), product("iphone", "iPhone 5"), product("ipod", "iPod Touch")])
        apple["name"] = "Apple Inc."
        let new: [String: Any] = ["sections": [company("Amazon", [product("kindle", "Kindle")]), apple]]
        let answer = try diff(client, ["old": old, "new": new, "options": ["changedMembers": true]])
        XCTAssertEqual(rows(answer)["reloaded"] as? [[Int]], [[1, 0], [1, 1], [1, 2]])
        XCTAssertEqual(rows(answer)["changedMembers"] as? [[String]], [["title"], ["title"], ["title"]])
        let sections = answer["sections"] as? [String: Any] ?? [:]
        XCTAssertEqual(sections["updated"] as? [Int], [1])
        XCTAssertEqual(sections["changedMembers"] as? [[String]], [["name"]], "items never count")
        // Without the option, no such member.
        let plain = try diff(client, ["old": old, "new": new])
        XCTAssertNil(rows(plain)["changedMembers"])
    }

    func testChangedMembersHandCases() throws {
        let client = try startServer().client
        let cases: [(old: String, new: String, expected: [String]?)] = [
            (#"{"id": 1, "a": 1, "b": 2}"#, #"{"id": 1, "b": 3, "c": 4}"#, ["a", "b", "c"]),  // removed, changed, added
            (#"{"id": 1, "n": 1, "s": "\u00e9", "o": {"x": 1, "y": 2}, "v": 0}"#, #"{"o": {"y": 2, "x": 1}, "id": 1, "s": "é", "n": 1.0, "v": 1}"#, ["v"]),
            (#"{"id": 1, "\u00e9": 1, "v": 0}"#, #"{"id": 1, "é": 2, "v": 0}"#, ["é"]),
            (#"{"id": 1, "ｚ": 1, "𝒜": 1, "Z": 1, "a": 1}"#, #"{"id": 1, "ｚ": 2, "𝒜": 2, "Z": 2, "a": 2}"#, ["Z", "a", "ｚ", "𝒜"]),  // code points, not UTF-16
            // Canonically equivalent names are two members (their scalars differ).
            (#"{"id": 1, "caf\u00e9": 1, "cafe\u0301": 1}"#, #"{"id": 1, "caf\u00e9": 1, "cafe\u0301": 2}"#, ["cafe\u{301}"]),
        ]
        for (old, new, expected) in cases {
            // Sent as written (a JSONSerialization round trip would merge equivalent names).
            let answer = assertJSON(try client.post("/diff", #"{"old": [\#(old)], "new": [\#(new)], "options": {"changedMembers": true}}"#))
            XCTAssertEqual(rows(answer)["reloaded"] as? [Int], [0], "\(old) → \(new)")
            XCTAssertEqual(rows(answer)["changedMembers"] as? [[String]], [expected!], "\(old) → \(new)")
        }
        // The item "a" and {"id": "a", ...} have the same identity (§1.2): a reload whose old
        // item is not an object has null.
        let answer = try diff(client, parseJSON(#"{"old": ["a", {"id": 1, "v": 1}], "new": [{"id": "a", "v": 1}, {"id": 1, "v": 2}], "options": {"changedMembers": true}}"#))
        XCTAssertEqual(rows(answer)["reloaded"] as? [Int], [0, 1])
        let entries = rows(answer)["changedMembers"] as? [Any] ?? []
        XCTAssertEqual(entries.count, 2)
        XCTAssertTrue(entries.first is NSNull, "\(entries)")
        XCTAssertEqual(entries.last as? [String], ["v"])
    }

    /// Random lists of objects: every entry is what an independent reading of the two items says.
    func testChangedMembersOfRandomLists() throws {
        let client = try startServer().client
        var random = SplitMix64(state: 99)
        let names = ["a", "b", "é", "Z", "title", "price"]
        func randomItem(_ id: Int) -> [String: Any] {
            var item: [String: Any] = ["id": id]
            for name in names where Int.random(in: 0..<3, using: &random) > 0 { item[name] = Int.random(in: 0..<3, using: &random) }
            return item
        }
        for _ in 0..<60 {
            let old = (0..<Int.random(in: 0..<30, using: &random)).map { randomItem($0) }
            var new = old.map { Int.random(in: 0..<3, using: &random) == 0 ? randomItem($0["id"] as! Int) : $0 }
            new.shuffle(using: &random)
            let answer = try diff(client, ["old": old, "new": new, "options": ["changedMembers": true]])
            let reloaded = rows(answer)["reloaded"] as? [Int] ?? []
            let changed = rows(answer)["changedMembers"] as? [[String]] ?? []
            XCTAssertEqual(reloaded.count, changed.count)
            for (index, names) in zip(reloaded, changed) {
                let before = old[index]
                let after = new.first { $0["id"] as! Int == before["id"] as! Int }!
                let expected = Set(before.keys).union(after.keys).filter { key in
                    (before[key] as? NSObject) != (after[key] as? NSObject)
                }
                XCTAssertEqual(names, sortedByCodePoints(Array(expected)), "\(before) → \(after)")
                XCTAssertFalse(names.isEmpty, "a reloaded row changed something")
            }
        }
    }

    func testMaxChangesTurnsABatchIntoAReload() throws {
        let client = try startServer().client
        // 1 delete, 1 insert, 1 reload, 1 move: 4 operations.
        let body: [String: Any] = ["old": [1, 2, 3, ["id": 4, "v": 1]], "new": [3, 1, ["id": 4, "v": 2], 5]]
        func answer(_ maxChanges: Int) throws -> [String: Any] {
            var body = body
            body["options"] = ["maxChanges": maxChanges]
            return try diff(client, body)
        }
        let full = try diff(client, body)
        let operations = ["deleted", "inserted", "reloaded", "moved"].reduce(0) { $0 + ((rows(full)[$1] as? [Any])?.count ?? 0) }
        XCTAssertEqual(canonicalJSON(try answer(operations)), canonicalJSON(full), "N operations fit maxChanges N")
        let reload = try answer(operations - 1)
        XCTAssertEqual(canonicalJSON(reload), canonicalJSON(["reload": true, "counts": ["old": 4, "new": 4]]))
        XCTAssertEqual(canonicalJSON(try diff(client, ["old": [1], "new": [1], "options": ["maxChanges": 0]])), canonicalJSON(try diff(client, ["old": [1], "new": [1]])))
        // Sections count too.
        let sectioned = try diff(client, parseJSON(#"{"old": {"sections": [{"id": 1, "items": []}]}, "new": {"sections": [{"id": 2, "items": []}]}, "options": {"maxChanges": 1}}"#))
        XCTAssertEqual(canonicalJSON(sectioned), canonicalJSON(["reload": true, "counts": ["old": [0], "new": [0]]]))
    }

    /// A feed's `PUT` and `changes`, from older versions too (the changed members read from
    /// the version's text), in memory and in SQLite.
    func testFeedAnswersWithOptions() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("options-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for store in ["memory", "sqlite:\(directory.path)/feeds.db"] {
            let client = try startServer(["--store", store]).client
            let v1 = assertVersion(try client.put("/feeds/f", #"[{"id": 1, "a": 1, "b": 1}, {"id": 2, "a": 1}]"#))
            let put = assertJSON(try client.put("/feeds/f?changedMembers=true", #"[{"id": 1, "a": 2, "b": 1}, {"id": 2, "a": 1}]"#))
            XCTAssertEqual(rows(put)["changedMembers"] as? [[String]], [["a"]], store)
            _ = assertVersion(try client.put("/feeds/f", #"[{"id": 1, "a": 2, "b": 2}, {"id": 2, "a": 1, "c": 0}]"#))
            let changes = assertJSON(try client.get("/feeds/f/changes?since=\(v1)&changedMembers=true"))
            XCTAssertEqual(rows(changes)["reloaded"] as? [Int], [0, 1], store)
            XCTAssertEqual(rows(changes)["changedMembers"] as? [[String]], [["a", "b"], ["c"]], store)
            let plain = assertJSON(try client.get("/feeds/f/changes?since=\(v1)"))
            XCTAssertNil(rows(plain)["changedMembers"], "answers kept are kept per options")
            let reload = assertJSON(try client.get("/feeds/f/changes?since=\(v1)&maxChanges=1"))
            XCTAssertEqual(reload["reload"] as? Bool, true, store)
            XCTAssertEqual(canonicalJSON(reload["data"]!), canonicalJSON(parseJSON(#"[{"id": 1, "a": 2, "b": 2}, {"id": 2, "a": 1, "c": 0}]"#)))
            XCTAssertNil(reload["values"])
            XCTAssertNil(reload["rows"])
            let reloadPut = assertJSON(try client.put("/feeds/f?maxChanges=0", "[3]"))
            XCTAssertEqual(reloadPut["reload"] as? Bool, true)
            XCTAssertEqual(canonicalJSON(reloadPut["counts"]!), canonicalJSON(["old": 2, "new": 1]))
        }
    }

    /// A body naming `old`, `new` or `options` twice is ambiguous: 400 duplicate_member,
    /// naming the member and where (it was a 422 invalid_shape).
    func testAMemberNamedTwiceIsRefused() throws {
        let client = try startServer().client
        for (body, member) in [(#"{"old": [1], "old": [2], "new": []}"#, "old"), (#"{"old": [], "new": [1], "new": [2]}"#, "new"),
                               (#"{"old": [], "new": [], "options": {}, "options": {"moves": false}}"#, "options"),
                               (#"{"old": [], "new": [], "options": {"moves": false, "moves": true}}"#, "moves")] {
            let problem = assertProblem(try client.post("/diff", body), 400, "duplicate_member")
            let detail = problem["detail"] as? String ?? ""
            XCTAssertTrue(detail.contains("\"\(member)\" twice") && detail.contains("at byte"), detail)
        }
    }

    func testBadOptionValuesAre400NamingTheMember() throws {
        let client = try startServer().client
        _ = assertVersion(try client.put("/feeds/f", "[1]"))
        for (member, value) in [("maxChanges", "-1"), ("maxChanges", "1.5"), ("maxChanges", #""3""#), ("maxChanges", "null"), ("maxChanges", "true"),
                                ("changedMembers", #""yes""#), ("changedMembers", "1"), ("changedMembers", "null"), ("moves", #""no""#),
                                ("idKey", #""""#), ("unknown", "1")] {
            let problem = assertProblem(try client.post("/diff", #"{"old": [], "new": [], "options": {"\#(member)": \#(value)}}"#), 400, "invalid_option")
            XCTAssertTrue((problem["detail"] as? String ?? "").contains(member), "\(member): \(value)")
        }
        assertProblem(try client.post("/diff", #"{"old": [], "new": [], "options": 3}"#), 400, "invalid_option")
        for query in ["maxChanges=-1", "maxChanges=1.5", "maxChanges=x", "maxChanges=", "changedMembers=yes", "changedMembers=1"] {
            let name = String(query.prefix { $0 != "=" })
            let changes = assertProblem(try client.get("/feeds/f/changes?since=0&\(query)"), 400, "invalid_query")
            XCTAssertTrue((changes["detail"] as? String ?? "").contains(name), query)
            assertProblem(try client.put("/feeds/f?\(query)", "[2]"), 400, "invalid_query")
        }
        XCTAssertEqual(assertJSON(try client.get("/feeds/f")).count, 3, "no bad write was stored")
        XCTAssertEqual(canonicalJSON(assertJSON(try client.get("/feeds/f"))["data"]!), "[1]")
    }
}
