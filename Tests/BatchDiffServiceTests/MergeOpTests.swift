import BatchDiff
import Foundation
import XCTest

/// The `merge` op of `PATCH` (docs/feeds.md §3.1): an RFC 7396 merge patch to a row's
/// content. Random merges run in PatchTests' histories; refusals in its table of bad patches.
final class MergeOpTests: ServerTestCase {
    /// The members a merge names change, `null` removes one, nested objects merge, the rest
    /// stays; the batch reloads the row in place. (An `upsert` of the same partial row
    /// replaces it whole: the title would be lost.)
    func testAMergeChangesOnlyWhatItNames() throws {
        let client = try startServer().client
        let first = assertVersion(try client.put("/feeds/todos", #"[{"id": "t1", "title": "milk", "done": false, "tags": {"a": 1, "b": 2}}, {"id": "t2", "title": "eggs"}]"#))
        func patch(_ ops: String) throws -> HTTPResult {
            try client.request("PATCH", "/feeds/todos", body: Array(#"{"ops": \#(ops)}"#.utf8))
        }
        let done = assertJSON(try patch(#"[{"op": "merge", "id": "t1", "patch": {"done": true}}]"#))
        XCTAssertEqual(int(done["version"]), first + 1)
        XCTAssertEqual(try decodeListBatch(done), ListBatch(rows: RowChanges(reloaded: [0]), oldCount: 2, newCount: 2))
        XCTAssertEqual(assertJSON(try client.get("/feeds/todos"))["data"].map(canonicalJSON),
                       canonicalJSON(parseJSON(#"[{"id": "t1", "title": "milk", "done": true, "tags": {"a": 1, "b": 2}}, {"id": "t2", "title": "eggs"}]"#)))
        // Removing with null, merging nested objects, adding members; two rows in one patch.
        let merged = assertJSON(try patch(#"""
            [{"op": "merge", "id": "t1", "patch": {"title": null, "tags": {"a": null, "c": [3]}, "note": {"x": null, "y": 1}, "absent": null}},
             {"op": "merge", "id": "t2", "patch": {"id": "t2", "done": false}}]
            """#))
        XCTAssertEqual(try decodeListBatch(merged), ListBatch(rows: RowChanges(reloaded: [0, 1]), oldCount: 2, newCount: 2))
        let latest = try client.get("/feeds/todos")
        // Members keep their order and new ones follow, as written.
        XCTAssertTrue(latest.text.contains(#"[{"id":"t1","done":true,"tags":{"b":2,"c":[3]},"note":{"y":1}},{"id":"t2","title":"eggs","done":false}]"#), latest.text)
        // A merge that changes nothing makes no version.
        let same = assertJSON(try patch(#"[{"op": "merge", "id": "t2", "patch": {"done": false, "gone": null}}]"#))
        XCTAssertEqual(same["changed"] as? Bool, false)
        XCTAssertEqual(int(same["version"]), first + 2)
        // Clients read the merged rows as a PUT would give them.
        let changes = assertJSON(try client.get("/feeds/todos/changes?since=\(first + 1)"))
        XCTAssertEqual(canonicalJSON((changes["values"] as? [String: Any])?["rows"] ?? [:]), canonicalJSON(parseJSON(#"""
            {"inserted": [], "reloaded": [{"id": "t1", "done": true, "tags": {"b": 2, "c": [3]}, "note": {"y": 1}}, {"id": "t2", "title": "eggs", "done": false}]}
            """#)))
        // In a sectioned feed, the op names the row's section.
        assertVersion(try client.put("/feeds/board", #"{"sections": [{"id": "s", "items": [{"id": 1, "n": {"a": 1}}]}]}"#))
        let board = assertJSON(try client.request("PATCH", "/feeds/board", body: Array(#"{"ops": [{"op": "merge", "id": 1, "section": "s", "patch": {"n": {"b": 2}}}]}"#.utf8)))
        XCTAssertEqual(canonicalJSON((board["rows"] as? [String: Any])?["reloaded"] ?? []), "[[0,0]]")
        XCTAssertEqual(assertJSON(try client.get("/feeds/board"))["data"].map(canonicalJSON),
                       canonicalJSON(parseJSON(#"{"sections": [{"id": "s", "items": [{"id": 1, "n": {"a": 1, "b": 2}}]}]}"#)))
    }
}
