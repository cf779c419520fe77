import BatchDiff
import Foundation
import XCTest

/// `PATCH /feeds/{id}` (docs/feeds.md §3.1): random patches against a model, in the memory
/// and SQLite stores (PostgreSQL: PostgresStoreTests); readers cannot tell a patched feed
/// from one written whole; a bad patch is refused, names its op and changes nothing; an
/// `Idempotency-Key` answers a repeat as the first time.
final class PatchTests: ServerTestCase {
    func testRandomListPatchesMatchTheModelAndWholeWrites() throws {
        try randomPatchHistory(try startServer(["--max-versions", "30"]).client, sectioned: false, patches: 600, seed: 0x9A7C_0001)
    }

    func testRandomSectionedPatchesMatchTheModelAndWholeWrites() throws {
        try randomPatchHistory(try startServer(["--max-versions", "30"]).client, sectioned: true, patches: 600, seed: 0x9A7C_0002)
    }

    func testRandomPatchesInASQLiteStore() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("patch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = { (name: String) in try self.startServer(["--store", "sqlite:" + directory.appendingPathComponent(name).path, "--max-versions", "30"]) }
        try randomPatchHistory(try server("list.db").client, sectioned: false, patches: 150, seed: 0x9A7C_0003)
        try randomPatchHistory(try server("sectioned.db").client, sectioned: true, patches: 150, seed: 0x9A7C_0004)
    }

    /// Two changed rows moved ahead of three that stay: keeping the three (the changed rows
    /// deleted and inserted) takes one operation less than keeping the changed ones and moving
    /// the others. The planner weighed a changed row as one and a half moves and took 6
    /// operations where the differ takes 5.
    func testChangedRowsThatMoveCostNoMoreThanTheDiff() throws {
        let client = try startServer().client
        let old = #"[{"id":46,"v":1},{"id":52,"v":1},{"id":59,"v":0},{"id":60,"v":1},{"id":51,"v":3},{"id":58,"v":1}]"#
        assertVersion(try client.put("/feeds/moves", old))
        let answer = assertJSON(try client.request("PATCH", "/feeds/moves", body: Array(#"""
            {"ops": [{"op": "upsert", "item": {"id": 59, "v": 1}, "at": "start"}, {"op": "upsert", "item": {"id": 51, "v": 0}, "after": 59},
                     {"op": "upsert", "item": {"id": 61, "v": 0}}]}
            """#.utf8)))
        let new = #"[{"id":59,"v":1},{"id":51,"v":0},{"id":46,"v":1},{"id":52,"v":1},{"id":60,"v":1},{"id":58,"v":1},{"id":61,"v":0}]"#
        XCTAssertEqual(assertJSON(try client.get("/feeds/moves"))["data"].map(canonicalJSON), canonicalJSON(parseJSON(new)))
        let batch = try decodeListBatch(answer)
        XCTAssertEqual(batch.rows.operationCount, 5, "\(answer)")
        XCTAssertEqual(try batch.apply(to: listElements(parseJSON(old)), values: batch.values(from: listElements(parseJSON(new)))), listElements(parseJSON(new)))
    }

    func testBadPatchesNameTheirOpAndChangeNothing() throws {
        let client = try startServer(["--body-limit", "4096"]).client
        let list = assertVersion(try client.put("/feeds/list", #"[{"id": 1}, {"id": 2}, {"id": 2, "v": 1}, {"id": 3}]"#))
        let unique = assertVersion(try client.put("/feeds/unique?uniqueIdentities=true", #"{"sections": [{"id": "a", "items": [1, 2]}, {"id": "b", "items": [3]}]}"#))
        let repeats = assertVersion(try client.put("/feeds/repeats", #"{"sections": [{"id": "a", "items": [1, 2]}, {"id": "b", "items": [1]}]}"#))
        let fine = #"{"op": "upsert", "item": {"id": 9}}"#
        for (feed, ops, status, code, op) in [
            ("list", #"[\#(fine), {"op": "remove", "id": 7}]"#, 422, "identity_not_found", 1),
            ("list", #"[{"op": "move", "id": 1, "before": 7}]"#, 422, "anchor_not_found", 0),
            ("list", #"[{"op": "move", "id": 1, "after": 1}]"#, 422, "anchor_not_found", 0),
            ("list", #"[\#(fine), {"op": "remove", "id": 2}]"#, 422, "duplicate_identity", 1),
            ("list", #"[{"op": "move", "id": 1, "before": 2}]"#, 422, "duplicate_identity", 0),
            ("list", #"[{"op": "upsertSection", "item": {"id": "a"}}]"#, 422, "invalid_shape", 0),
            ("list", #"[{"op": "remove", "id": 1, "section": "a"}]"#, 422, "invalid_shape", 0),
            ("list", #"[{"op": "move", "id": 1}]"#, 422, "invalid_shape", 0),
            ("list", #"[{"op": "move", "id": 1, "at": "middle"}]"#, 422, "invalid_shape", 0),
            ("list", #"[{"op": "move", "id": 1, "at": "end", "before": 3}]"#, 422, "invalid_shape", 0),
            ("list", #"[\#(fine), {"op": "upsert", "item": 1, "bfore": 3}]"#, 422, "invalid_shape", 1),
            ("list", #"[{"op": "replace", "id": 1}]"#, 422, "invalid_shape", 0),
            ("list", #"[{"id": 1}]"#, 422, "invalid_shape", 0),
            ("list", #"[\#(fine), {"op": "merge", "id": 7, "patch": {"v": 1}}]"#, 422, "identity_not_found", 1),
            ("list", #"[{"op": "merge", "id": 1, "patch": {"id": 4}}]"#, 422, "invalid_shape", 0),
            ("list", #"[{"op": "merge", "id": 1, "patch": {"id": null}}]"#, 422, "invalid_shape", 0),
            ("list", #"[{"op": "merge", "id": 1, "patch": 5}]"#, 422, "invalid_shape", 0),
            ("list", #"[{"op": "merge", "id": 1}]"#, 422, "invalid_shape", 0),
            ("list", #"[{"op": "merge", "id": 2, "patch": {}}]"#, 422, "duplicate_identity", 0),
            ("list", #"[{"op": "merge", "id": 1, "patch": {}, "section": "a"}]"#, 422, "invalid_shape", 0),
            ("unique", #"[{"op": "merge", "id": 1, "patch": {}}]"#, 422, "invalid_shape", 0),
            ("unique", #"[{"op": "merge", "id": 3, "patch": {}, "section": "a"}]"#, 422, "identity_not_found", 0),
            ("unique", #"[{"op": "upsert", "item": 4}]"#, 422, "invalid_shape", 0),
            ("unique", #"[{"op": "upsert", "item": 3, "section": "a"}]"#, 422, "duplicate_identity", 0),
            ("unique", #"[{"op": "upsertSection", "item": {"id": "c", "items": [5, 1]}}]"#, 422, "duplicate_identity", 0),
            ("unique", #"[{"op": "upsertSection", "item": {"id": "c", "items": [5, 5]}}]"#, 422, "duplicate_identity", 0),
            ("unique", #"[{"op": "upsertSection", "item": {"id": "a", "items": []}}]"#, 422, "invalid_shape", 0),
            ("unique", #"[{"op": "remove", "id": 3, "section": "a"}]"#, 422, "identity_not_found", 0),
            ("unique", #"[{"op": "remove", "id": 1, "section": "z"}]"#, 422, "identity_not_found", 0),
            ("unique", #"[{"op": "move", "id": 1, "section": "b", "before": 2}]"#, 422, "anchor_not_found", 0),
            ("unique", #"[{"op": "moveSection", "id": "z", "at": "start"}]"#, 422, "identity_not_found", 0),
            ("unique", #"[{"op": "removeSection", "id": "a"}, {"op": "moveSection", "id": "b", "after": "a"}]"#, 422, "anchor_not_found", 1),
            // An identity two sections' rows have cannot be named, in either section.
            ("repeats", #"[{"op": "remove", "id": 1, "section": "a"}]"#, 422, "duplicate_identity", 0),
            ("repeats", #"[{"op": "move", "id": 2, "section": "b", "after": 1}]"#, 422, "duplicate_identity", 0),
        ] {
            let problem = assertProblem(try client.request("PATCH", "/feeds/\(feed)", body: Array(#"{"ops": \#(ops)}"#.utf8)), status, code)
            XCTAssertEqual(int(problem["op"]), op, ops)
        }
        for (body, status, code) in [
            (#"{"ops": [{"op": "remove", "id": 1}"#, 400, "malformed_json"),
            (#"{"ops": [{"op": "remove", "id": 1, "id": 2}]}"#, 400, "duplicate_member"),
            (#"[{"op": "remove", "id": 1}]"#, 422, "invalid_shape"),
            (#"{"ops": [], "more": 1}"#, 422, "invalid_shape"),
            ("{\"ops\": [" + Array(repeating: fine, count: 200).joined(separator: ", ") + "]}", 413, "body_too_large"),
        ] {
            assertProblem(try client.request("PATCH", "/feeds/list", body: Array(body.utf8)), status, code)
        }
        // Other patch formats are 415s that name the ops format.
        for type in ["application/json-patch+json", "application/merge-patch+json"] {
            let problem = assertProblem(try client.request("PATCH", "/feeds/list", body: Array("[]".utf8), headers: ["Content-Type": type]), 415, "unsupported_media_type")
            XCTAssertTrue((problem["detail"] as? String ?? "").contains("\"ops\""), "\(problem)")
        }
        assertProblem(try client.request("PATCH", "/feeds/none", body: Array(#"{"ops": []}"#.utf8)), 404, "feed_not_found")
        // Nothing changed: the same versions, the same data.
        XCTAssertEqual(assertJSON(try client.get("/feeds/list"))["data"].map(canonicalJSON), canonicalJSON(parseJSON(#"[{"id": 1}, {"id": 2}, {"id": 2, "v": 1}, {"id": 3}]"#)))
        assertVersion(try client.get("/feeds/list"), list)
        assertVersion(try client.get("/feeds/unique"), unique)
        assertVersion(try client.get("/feeds/repeats"), repeats)
    }

    func testAPatchIsConditionalAndAnsweredAsAPut() throws {
        let client = try startServer().client
        let first = assertVersion(try client.put("/feeds/f", #"[{"id": 1, "title": "a"}, {"id": 2, "title": "b"}]"#))
        let rename = Array(#"{"ops": [{"op": "upsert", "item": {"id": 2, "title": "B"}}]}"#.utf8)
        assertProblem(try client.request("PATCH", "/feeds/f", body: rename, headers: ["If-Match": tag(first + 1)]), 412, "precondition_failed")
        let answer = assertJSON(try client.request("PATCH", "/feeds/f?changedMembers=true&format=steps", body: rename, headers: ["If-Match": "\"\(first)-gzip\""]))
        XCTAssertEqual(int(answer["version"]), first + 1)
        XCTAssertEqual(canonicalJSON(answer["steps"] ?? []), canonicalJSON(parseJSON(#"[{"op": "change", "at": 1, "count": 1, "changedMembers": [["title"]]}]"#)), "\(answer)")
        // Ops that leave the feed as it was make no version.
        let again = assertJSON(try client.request("PATCH", "/feeds/f", body: rename))
        XCTAssertEqual(again["changed"] as? Bool, false)
        XCTAssertEqual(int(again["version"]), first + 1)
        // A reader of the version before gets the reload with its value.
        let changes = assertJSON(try client.get("/feeds/f/changes?since=\(first)"))
        XCTAssertEqual(canonicalJSON(changes["values"] ?? [:]), canonicalJSON(parseJSON(#"{"rows": {"inserted": [], "reloaded": [{"id": 2, "title": "B"}]}}"#)))
        assertProblem(try client.request("PATCH", "/feeds/f?format=json-patch", body: rename), 400, "invalid_query")
    }

    func testIdempotencyKeyAnswersARepeatAsTheFirstTime() throws {
        let client = try startServer(["--max-versions", "3"]).client
        let first = assertVersion(try client.put("/feeds/k", #"[{"id": 1}, {"id": 2}, {"id": 3}]"#))
        func patch(_ body: String, key: String?, headers: [String: String] = [:]) throws -> HTTPResult {
            try client.request("PATCH", "/feeds/k", body: Array(body.utf8), headers: headers.merging(key.map { ["Idempotency-Key": $0] } ?? [:]) { $1 })
        }
        let move = #"{"ops": [{"op": "move", "id": 1, "at": "end"}]}"#
        let answer = try patch(move, key: "order-17")
        assertVersion(answer, first + 1)
        // Repeated (the same JSON, spaced otherwise; with an If-Match that no longer holds):
        // the first answer, and nothing made.
        for repeated in [try patch(move, key: "order-17"), try patch(move.replacingOccurrences(of: " ", with: "\n "), key: "order-17", headers: ["If-Match": tag(first)])] {
            XCTAssertEqual(repeated.status, 200)
            XCTAssertEqual(repeated.text, answer.text)
            XCTAssertEqual(repeated.header("ETag"), tag(first + 1))
        }
        assertVersion(try client.get("/feeds/k"), first + 1)
        // Another body under the key is refused; nothing changes.
        assertProblem(try patch(#"{"ops": [{"op": "remove", "id": 1}]}"#, key: "order-17"), 422, "idempotency_key_reused")
        // An error answer is not kept: the key is free for the corrected request.
        assertProblem(try patch(#"{"ops": [{"op": "remove", "id": 9}]}"#, key: "order-18"), 422, "identity_not_found")
        assertVersion(try patch(#"{"ops": [{"op": "remove", "id": 3}]}"#, key: "order-18"), first + 2)
        // A write that changes nothing keeps its answer too.
        let unchanged = assertJSON(try patch(#"{"ops": [{"op": "upsert", "item": {"id": 2}}]}"#, key: "noop"))
        XCTAssertEqual(unchanged["changed"] as? Bool, false)
        assertVersion(try patch(#"{"ops": [{"op": "upsert", "item": {"id": 4}}]}"#, key: nil), first + 3)
        let again = assertJSON(try patch(#"{"ops": [{"op": "upsert", "item": {"id": 2}}]}"#, key: "noop"))
        XCTAssertEqual(int(again["version"]), first + 2)
        assertVersion(try client.get("/feeds/k"), first + 3)
        // Once its version is no longer retained, a key is forgotten: the ops apply again.
        for id in 5...7 { assertVersion(try patch(#"{"ops": [{"op": "upsert", "item": {"id": \#(id)}}]}"#, key: nil)) }
        assertVersion(try patch(move, key: "order-17"), first + 7)
        // Keys are 1 to 128 visible ASCII characters.
        for bad in ["a b", String(repeating: "k", count: 129), "é"] {
            assertProblem(try patch(move, key: bad), 400, "invalid_header")
        }
        assertVersion(try patch(#"{"ops": [{"op": "move", "id": 1, "at": "start"}]}"#, key: String(repeating: "k", count: 128)), first + 8)
    }

    /// A version keeps at most 64 answers: the same unchanged write under ever new keys does
    /// not grow the feed without bound.
    func testAVersionKeepsAtMost64Answers() throws {
        let client = try startServer().client
        let first = assertVersion(try client.put("/feeds/k", "[1, 2]"))
        let unchanged = Array(#"{"ops": [{"op": "upsert", "item": 1}]}"#.utf8)
        for key in 1...70 {
            XCTAssertEqual(assertJSON(try client.request("PATCH", "/feeds/k", body: unchanged, headers: ["Idempotency-Key": "k\(key)"]))["changed"] as? Bool, false)
        }
        assertVersion(try client.request("PATCH", "/feeds/k", body: Array(#"{"ops": [{"op": "remove", "id": 2}]}"#.utf8)), first + 1)
        // The first 64 are kept with the version they named; the rest were answered, not kept.
        let kept = assertJSON(try client.request("PATCH", "/feeds/k", body: unchanged, headers: ["Idempotency-Key": "k64"]))
        XCTAssertEqual(int(kept["version"]), first)
        let forgotten = assertJSON(try client.request("PATCH", "/feeds/k", body: unchanged, headers: ["Idempotency-Key": "k65"]))
        XCTAssertEqual(int(forgotten["version"]), first + 1)
    }

    /// Kept with the version in the file: after a restart, a repeat gets the first answer.
    func testIdempotencyKeysSurviveARestartOfASQLiteStore() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = ["--store", "sqlite:" + directory.appendingPathComponent("feeds.db").path]
        let server = try startServer(store)
        let first = assertVersion(try server.client.put("/feeds/k", "[1, 2]"))
        let body = Array(#"{"ops": [{"op": "remove", "id": 1}]}"#.utf8)
        let answer = try server.client.request("PATCH", "/feeds/k", body: body, headers: ["Idempotency-Key": "once"])
        assertVersion(answer, first + 1)
        XCTAssertEqual(server.terminate(), 0)
        let restarted = try startServer(store)
        let repeated = try restarted.client.request("PATCH", "/feeds/k", body: body, headers: ["Idempotency-Key": "once"])
        XCTAssertEqual(repeated.text, answer.text)
        assertVersion(try restarted.client.get("/feeds/k"), first + 1)
        // Deleted with its feed.
        XCTAssertEqual(try restarted.client.delete("/feeds/k").status, 204)
        let again = assertVersion(try restarted.client.put("/feeds/k", "[1, 2]"))
        assertVersion(try restarted.client.request("PATCH", "/feeds/k", body: body, headers: ["Idempotency-Key": "once"]), again + 1)
    }
}
