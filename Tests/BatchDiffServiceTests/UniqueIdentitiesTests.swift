import Foundation
import XCTest

/// `uniqueIdentities` (CONTRACT 13, docs/batch-format.md §1.5): what
/// `NSDiffableDataSourceSnapshot` and SwiftUI need. A collection that repeats an identity
/// (rows across the whole collection, sections among sections) is a 422
/// `duplicate_identity` naming where; the flag stays with a feed in every store.
final class UniqueIdentitiesTests: ServerTestCase {
    func testPostDiffRefusesRepeatedIdentitiesWhenAsked() throws {
        let client = try startServer().client
        let unique = #""options": {"uniqueIdentities": true}"#
        for (body, place) in [
            (#"{"old": [1, 2], "new": [{"id": 3}, 2, {"id": 3, "v": 1}], \#(unique)}"#, "new[2] repeats the identity of new[0]"),
            (#"{"old": ["a", "b", "a"], "new": [], \#(unique)}"#, "old[2] repeats the identity of old[0]"),
            (#"{"old": {"sections": []}, "new": {"sections": [{"id": "s", "items": [1]}, {"id": "t", "items": [2, 1]}]}, \#(unique)}"#,
             "new.sections[1].items[1] repeats the identity of new.sections[0].items[0]"),
            (#"{"old": {"sections": [{"id": "s", "items": []}, {"id": "s", "items": []}]}, "new": {"sections": []}, \#(unique)}"#,
             "old.sections[1] repeats the identity of old.sections[0]"),
        ] {
            let problem = assertProblem(try client.post("/diff", body), 422, "duplicate_identity")
            XCTAssertTrue((problem["detail"] as? String ?? "").contains(place), "\(body): \(problem)")
            // Without the flag, repeats are diffed as ever.
            let plain = body.replacingOccurrences(of: unique, with: #""options": {}"#)
            XCTAssertEqual(try client.post("/diff", plain).status, 200, plain)
        }
        XCTAssertEqual(try client.post("/diff", #"{"old": [1, 2], "new": [2, 3], \#(unique)}"#).status, 200)
        // With another idKey, identities are read with it.
        let keyed = #"{"old": [], "new": [{"k": 1, "id": 1}, {"k": 2, "id": 1}], "options": {"idKey": "k", "uniqueIdentities": true}}"#
        XCTAssertEqual(try client.post("/diff", keyed).status, 200)
        assertProblem(try client.post("/diff", #"{"old": [], "new": [], "options": {"uniqueIdentities": 1}}"#), 400, "invalid_option")
    }

    func testAFeedKeepsItsFlagAndHoldsLaterWritesToIt() throws {
        let client = try startServer().client
        assertProblem(try client.put("/feeds/u?uniqueIdentities=true", "[1, 2, 1]"), 422, "duplicate_identity")
        assertProblem(try client.get("/feeds/u"), 404, "feed_not_found")
        let first = assertVersion(try client.put("/feeds/u?uniqueIdentities=true", "[1, 2]"))
        // Later writes are held to it without repeating it.
        let problem = assertProblem(try client.put("/feeds/u", "[1, 2, 2]"), 422, "duplicate_identity")
        XCTAssertTrue((problem["detail"] as? String ?? "").contains("body[2] repeats the identity of body[1]"), "\(problem)")
        assertVersion(try client.put("/feeds/u", "[2, 3]"), first + 1)
        // A write that names another setting is refused, as a different idKey is.
        assertProblem(try client.put("/feeds/u?uniqueIdentities=false", "[3]"), 422, "invalid_shape")
        assertProblem(try client.put("/feeds/u?uniqueIdentities=yes", "[3]"), 400, "invalid_query")
        assertVersion(try client.put("/feeds/u?uniqueIdentities=true", "[3]"), first + 2)
        // A feed made without it takes repeats, and cannot be given it later.
        let plain = assertVersion(try client.put("/feeds/plain", "[1, 1]"))
        assertProblem(try client.put("/feeds/plain?uniqueIdentities=true", "[1]"), 422, "invalid_shape")
        assertVersion(try client.put("/feeds/plain", "[2, 2]"), plain + 1)
        // Deleted and created again, a feed takes new settings.
        XCTAssertEqual(try client.delete("/feeds/u").status, 204)
        assertVersion(try client.put("/feeds/u", "[1, 1]"))
    }

    /// The flag is kept with the feed in a file: after a restart, writes are still held to it.
    func testTheFlagSurvivesARestartOfASQLiteStore() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("unique-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = "sqlite:" + directory.appendingPathComponent("feeds.db").path
        let first = try startServer(["--store", store])
        assertVersion(try first.client.put("/feeds/u?uniqueIdentities=true", #"{"sections": [{"id": "a", "items": [1]}]}"#))
        assertVersion(try first.client.put("/feeds/plain", "[1]"))
        XCTAssertEqual(first.terminate(), 0)
        let second = try startServer(["--store", store])
        assertProblem(try second.client.put("/feeds/u", #"{"sections": [{"id": "a", "items": [1]}, {"id": "a", "items": []}]}"#), 422, "duplicate_identity")
        assertVersion(try second.client.put("/feeds/plain", "[1, 1]"))
    }
}
