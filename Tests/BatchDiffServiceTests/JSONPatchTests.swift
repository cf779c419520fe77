import Foundation
import TestSupport
import XCTest

/// `format: json-patch` (docs/batch-format.md §7), checked by applying every patch with an
/// independent RFC 6902 implementation: PyPI's `jsonpatch`, in the tests' venv
/// (scripts/test-venv.sh, which `make test` runs first).
final class JSONPatchTests: ServerTestCase {

    private func patch(_ client: HTTPClient, _ old: Any, _ new: Any) throws -> Any {
        let response = try client.post("/diff", jsonText(["old": old, "new": new, "options": ["format": "json-patch"]]))
        XCTAssertEqual(response.status, 200, response.text)
        XCTAssertEqual(response.header("content-type"), "application/json-patch+json")
        return response.json ?? []
    }

    func testPatchesOfTheExamplesAndRandomCollectionsApply() throws {
        let client = try startServer().client
        var cases: [(document: Any, patch: Any, expected: Any)] = []
        func add(_ old: Any, _ new: Any) throws { cases.append((old, try patch(client, old, new), new)) }
        try add(["a", "b", "c", "d"], ["d", "a", "b", "e"])
        try add(
            ["title": "x", "sections": [["id": "a", "t": 1, "items": [["id": 1, "v": 1], ["id": 2]]], ["id": "c", "items": [5]]]],
            ["sections": [["id": "b", "items": [3]], ["id": "a", "t": 2, "items": [["id": 2], ["id": 1, "v": 2], 5]]], "note": "~/"]
        )
        // Names that need escaping in a JSON Pointer, one with a combining mark after its `/`.
        try add(["sections": [["id": "a", "a/\u{301}b": 1, "~x": 1, "items": []]]], ["sections": [["id": "a", "a/\u{301}b": 2, "~x": 2, "items": []]]])
        for seed in 0..<8 {
            var generator = SnapshotGenerator(seed: UInt64(100 + seed))
            var outside = SplitMix64(state: UInt64(200 + seed))
            var list: [Any] = []
            var sections: [String: Any] = ["sections": []]
            for _ in 0..<40 {
                let nextList = generator.nextList(after: list)
                var nextSections = generator.nextSectioned(after: sections)
                if outside.chance(50) { nextSections["generation"] = outside.below(3) }  // a member outside sections
                try add(list, nextList)
                try add(sections, nextSections)
                (list, sections) = (nextList, nextSections)
            }
        }
        let results = try applyWithJSONPatch(cases.map { ($0.document, $0.patch) })
        XCTAssertEqual(results.count, cases.count)
        for (result, test) in zip(results, cases) {
            XCTAssertEqual(result as? NSObject, test.expected as? NSObject, "patch \(canonicalJSON(test.patch)) of \(canonicalJSON(test.document))")
        }
    }

    /// A patch is about the size of what changed; a feed's takes a client from its version
    /// to the latest, its ETag naming the latest.
    func testFeedPatchesAreSmallAndLeadToTheLatest() throws {
        let client = try startServer().client
        let items = (0..<2000).map { ["id": $0, "title": "Item \($0)", "price": $0 % 50] as [String: Any] }
        var changed = items
        changed[1000]["price"] = 999
        let small = try patch(client, items, changed)
        XCTAssertLessThan(jsonText(small).utf8.count, 200, jsonText(small))
        var generator = SnapshotGenerator(seed: 77)
        var snapshot: [String: Any] = ["sections": []]
        var held: [(version: Int, document: Any)] = [(0, ["sections": []] as [String: Any])]
        var cases: [(document: Any, patch: Any, expected: Any)] = []
        for _ in 0..<20 {
            snapshot = generator.nextSectioned(after: snapshot)
            let version = assertVersion(try client.put("/feeds/p", jsonText(snapshot)))
            for (since, document) in [held[0]] + held.dropFirst().suffix(3) {
                let response = try client.get("/feeds/p/changes?since=\(since)&format=json-patch")
                XCTAssertEqual(response.status, 200, response.text)
                XCTAssertEqual(response.header("content-type"), "application/json-patch+json")
                XCTAssertEqual(response.header("etag"), "\"\(version)\"")
                cases.append((document, response.json ?? [], snapshot))
            }
            held.append((version, snapshot))
        }
        let results = try applyWithJSONPatch(cases.map { ($0.document, $0.patch) })
        for (result, test) in zip(results, cases) {
            XCTAssertEqual(result as? NSObject, test.expected as? NSObject, "patch \(canonicalJSON(test.patch))")
        }
        assertProblem(try client.put("/feeds/p?format=json-patch", "[1]"), 400, "invalid_query")
    }
}
