import BatchDiff
import Foundation
import XCTest

/// A random history of patches checked against a model (``PatchGenerator``), for every store.
extension ServerTestCase {
    /// `patches` random patches of feed `patched` on the server of `client` (retaining 30
    /// versions; a sectioned feed keeps its identities unique), each checked against the
    /// model: the stored snapshot, the answer's batch applied to the data before, and no
    /// more operations than `POST /diff` of the pair.
    /// Each result is also written whole to feed `whole` (and now and then to the patched
    /// feed, where it changes nothing); then every retained version's `changes` of the two
    /// feeds are alike.
    func randomPatchHistory(_ client: HTTPClient, sectioned: Bool, patches: Int, seed: UInt64) throws {
        var generator = PatchGenerator(seed: seed)
        let shape = sectioned ? "sectioned" : "list"
        var data: [[String: Any]] = []
        func document(_ data: [[String: Any]]) -> Any { sectioned ? ["sections": data] : data }
        let created = sectioned ? "?uniqueIdentities=true" : ""
        var version = assertVersion(try client.put("/feeds/patched-\(shape)\(created)", jsonText(document(data))))
        var wholeVersion = assertVersion(try client.put("/feeds/whole-\(shape)\(created)", jsonText(document(data))))
        var versions: [(patched: Int, whole: Int, data: Any)] = [(version, wholeVersion, document(data))]
        for step in 0..<patches {
            let (ops, result) = sectioned ? generator.sectionedPatch(of: data) : generator.listPatch(of: data)
            let body = jsonText(["ops": ops])
            let response = try client.request("PATCH", "/feeds/patched-\(shape)", body: Array(body.utf8))
            let answer = assertJSON(response)
            let changed = canonicalJSON(document(result)) != canonicalJSON(document(data))
            XCTAssertEqual(answer["changed"] as? Bool, changed, "step \(step): \(body)")
            if changed { version += 1 }
            XCTAssertEqual(int(answer["version"]), version, "step \(step)")
            XCTAssertEqual(response.header("ETag"), tag(version))
            try checkBatch(answer, from: document(data), to: document(result), sectioned: sectioned, client: client, step: step, body: body)
            try checkPages(of: "/feeds/patched-\(shape)", client: client, version: version, expected: result, sectioned: sectioned, step: step)
            let stored = assertJSON(try client.get("/feeds/patched-\(shape)"))
            XCTAssertEqual(stored["data"].map(canonicalJSON), canonicalJSON(document(result)), "step \(step): \(body)")
            if step % 10 == 0 {
                // The version a patch made is the one its data would make whole: written
                // again in full, it makes none.
                let again = assertJSON(try client.put("/feeds/patched-\(shape)", jsonText(document(result))))
                XCTAssertEqual(again["changed"] as? Bool, false, "step \(step): \(body)")
            }
            let whole = assertJSON(try client.put("/feeds/whole-\(shape)", jsonText(document(result))))
            XCTAssertEqual(whole["changed"] as? Bool, changed)
            wholeVersion = int(whole["version"]) ?? 0
            if changed { versions.append((version, wholeVersion, document(result))) }
            data = result
            if testRun?.failureCount ?? 0 > 0 { return }
        }
        // A reader at any retained version (and at 0) gets the same from both feeds; but from
        // the version before the latest, the batch the patch made from its ops, which takes
        // the reader to the latest with no more operations than the diff (and may differ
        // from it where a longest run is not the only one).
        for held in versions.suffix(30) + [(0, 0, document([]))] {
            let fromPatched = assertJSON(try client.get("/feeds/patched-\(shape)/changes?since=\(held.patched)"))
            XCTAssertEqual(int(fromPatched["to"]), version)
            guard held.patched != version - 1 else {
                try checkBatch(fromPatched, from: held.data, to: document(data), sectioned: sectioned, client: client, step: patches, body: "since \(held.patched)")
                if sectioned {
                    checkSectionedValues(fromPatched, from: (held.data as? [String: Any])?["sections"] as? [[String: Any]] ?? [], to: data)
                } else {
                    checkListValues(fromPatched, from: held.data as? [[String: Any]] ?? [], to: data)
                }
                continue
            }
            let fromWhole = assertJSON(try client.get("/feeds/whole-\(shape)/changes?since=\(held.whole)"))
            let strip = { (answer: [String: Any]) in canonicalJSON(answer.filter { !["feed", "from", "to"].contains($0.key) }) }
            XCTAssertEqual(strip(fromPatched), strip(fromWhole), "since \(held.patched)")
        }
    }

    /// A page of `feed` (at `version`) at an offset that moves with `step`, and now and then
    /// every page by cursor, are as the model `expected` (rows, or sections) has them.
    private func checkPages(of feed: String, client: HTTPClient, version: Int, expected: [[String: Any]], sectioned: Bool, step: Int) throws {
        func data(_ elements: [[String: Any]]) -> String { canonicalJSON(sectioned ? ["sections": elements] : elements) }
        let (offset, limit) = (step * 7 % (expected.count + 2), 1 + step % 5)
        let page = assertJSON(try client.get("\(feed)?offset=\(offset)&limit=\(limit)"))
        let rows = Array(expected.dropFirst(offset).prefix(limit))
        XCTAssertEqual(page["data"].map(canonicalJSON), data(rows), "step \(step): offset \(offset), limit \(limit)")
        XCTAssertEqual(int(page["version"]), version)
        XCTAssertEqual(int(page["total"]), expected.count)
        XCTAssertEqual(int(page["offset"]), offset)
        XCTAssertEqual(page["next"].map(canonicalJSON), offset + limit < expected.count ? rows.last?["id"].map(canonicalJSON) : nil, "step \(step)")
        guard step % 50 == 0 else { return }
        var walked: [[String: Any]] = []
        var next: Any?
        repeat {
            let query = next.map { "after=\(String(describing: $0).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)" } ?? "offset=0"
            let page = assertJSON(try client.get("\(feed)?\(query)&limit=3"))
            let elements = sectioned ? (page["data"] as? [String: Any])?["sections"] as? [[String: Any]] : page["data"] as? [[String: Any]]
            walked += elements ?? []
            next = page["next"]
        } while next != nil && walked.count <= expected.count
        XCTAssertEqual(data(walked), data(expected), "step \(step): pages by cursor")
    }

    /// The write answer's batch takes `old` to `new`, with no more operations than the diff
    /// of the pair.
    private func checkBatch(_ answer: [String: Any], from old: Any, to new: Any, sectioned: Bool, client: HTTPClient, step: Int, body: String) throws {
        let pair = assertJSON(try client.post("/diff", jsonText(["old": old, "new": new])))
        do {
            if sectioned {
                let batch = try decodeSectionedBatch(answer)
                let rebuilt = try batch.apply(to: sectionElements(old), values: batch.values(from: sectionElements(new)))
                XCTAssertEqual(rebuilt, sectionElements(new), "step \(step): \(body)")
            } else {
                let batch = try decodeListBatch(answer)
                XCTAssertEqual(try batch.apply(to: listElements(old), values: batch.values(from: listElements(new))), listElements(new), "step \(step): \(body)")
            }
        } catch {
            XCTFail("step \(step): \(error); \(body) → \(answer)")
        }
        XCTAssertLessThanOrEqual(operationCount(answer), operationCount(pair), "step \(step): \(body) ANSWER \(jsonText(answer["rows"] ?? [:])) PAIR \(jsonText(pair["rows"] ?? [:])) OLD \(jsonText(old)) NEW \(jsonText(new))")
    }

    /// The `values` of a list's `changes` answer are the new rows it inserts, and the new
    /// content of the rows it reloads, in its order.
    private func checkListValues(_ answer: [String: Any], from old: [[String: Any]], to new: [[String: Any]]) {
        let rows = answer["rows"] as? [String: Any] ?? [:]
        let values = (answer["values"] as? [String: Any])?["rows"] as? [String: Any] ?? [:]
        let inserted = (rows["inserted"] as? [Int] ?? []).map { canonicalJSON(new[$0]) }
        XCTAssertEqual((values["inserted"] as? [Any] ?? []).map(canonicalJSON), inserted)
        let reloaded = (rows["reloaded"] as? [Int] ?? []).map { index in
            canonicalJSON(new.first { canonicalJSON($0["id"] ?? 0) == canonicalJSON(old[index]["id"] ?? 0) } ?? [:])
        }
        XCTAssertEqual((values["reloaded"] as? [Any] ?? []).map(canonicalJSON), reloaded)
    }

    /// The `values` of a sectioned `changes` answer: the new rows it inserts, the new content
    /// of the rows it reloads, each inserted section whole and each updated one's header
    /// (without `items`), in its order.
    private func checkSectionedValues(_ answer: [String: Any], from old: [[String: Any]], to new: [[String: Any]]) {
        let rows = answer["rows"] as? [String: Any] ?? [:]
        let sections = answer["sections"] as? [String: Any] ?? [:]
        let values = answer["values"] as? [String: Any] ?? [:]
        let rowValues = values["rows"] as? [String: Any] ?? [:]
        let sectionValues = values["sections"] as? [String: Any] ?? [:]
        let items = { (sections: [[String: Any]], path: [Int]) in (sections[path[0]]["items"] as? [Any] ?? [])[path[1]] }
        let inserted = (rows["inserted"] as? [[Int]] ?? []).map { canonicalJSON(items(new, $0)) }
        XCTAssertEqual((rowValues["inserted"] as? [Any] ?? []).map(canonicalJSON), inserted)
        let newRows = new.flatMap { $0["items"] as? [[String: Any]] ?? [] }
        let reloaded = (rows["reloaded"] as? [[Int]] ?? []).map { path in
            let id = canonicalJSON((items(old, path) as? [String: Any])?["id"] ?? 0)
            return canonicalJSON(newRows.first { canonicalJSON($0["id"] ?? 0) == id } ?? [:])
        }
        XCTAssertEqual((rowValues["reloaded"] as? [Any] ?? []).map(canonicalJSON), reloaded)
        XCTAssertEqual((sectionValues["inserted"] as? [Any] ?? []).map(canonicalJSON), (sections["inserted"] as? [Int] ?? []).map { canonicalJSON(new[$0]) })
        XCTAssertEqual(
            (sectionValues["updated"] as? [Any] ?? []).map(canonicalJSON),
            (sections["updated"] as? [Int] ?? []).map { canonicalJSON(new[$0].filter { $0.key != "items" }) }
        )
    }

    private func operationCount(_ answer: [String: Any]) -> Int {
        ["rows", "sections"].reduce(0) { total, member in
            let lists = answer[member] as? [String: Any] ?? [:]
            return total + lists.values.reduce(0) { $0 + (($1 as? [Any])?.count ?? 0) }
        }
    }
}
