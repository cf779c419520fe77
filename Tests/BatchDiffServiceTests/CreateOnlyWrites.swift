import Foundation
import XCTest

/// `If-None-Match` and `If-Match: *` on writes (docs/feeds.md §3.5), checked the same way
/// over every store: a retried sign-up that creates a feed with `If-None-Match: *` never
/// wipes the list it made the first time.
func assertCreateOnlyWrites(_ client: HTTPClient, feed: String, file: StaticString = #filePath, line: UInt = #line) throws {
    let path = "/feeds/\(feed)"
    // Only if it exists: a feed that does not is not created.
    assertProblem(try client.put(path, "[]", headers: ["If-Match": "*"]), 412, "precondition_failed", file: file, line: line)
    XCTAssertEqual(try client.get(path).status, 404, "If-Match: * created the feed", file: file, line: line)
    // Create only: the first creates, a retry changes nothing (not even to the same text).
    let created = assertVersion(try client.put(path, #"[{"id": "t1", "title": "milk"}, {"id": "t2", "title": "eggs"}]"#, headers: ["If-None-Match": "*"]), file: file, line: line)
    for body in ["[]", #"[{"id": "t1", "title": "milk"}, {"id": "t2", "title": "eggs"}]"#] {
        let retried = try client.put(path, body, headers: ["If-None-Match": "*"])
        let problem = assertProblem(retried, 412, "precondition_failed", file: file, line: line)
        XCTAssertEqual(problem["detail"] as? String, "feed \(feed) exists, at version \(created)", file: file, line: line)
    }
    assertProblem(try client.request("PATCH", path, body: Array(#"{"ops": [{"op": "remove", "id": "t1"}]}"#.utf8), headers: ["If-None-Match": "*"]),
                  412, "precondition_failed", file: file, line: line)
    let kept = try client.get(path)
    assertVersion(kept, created, file: file, line: line)
    XCTAssertEqual(assertJSON(kept, file: file, line: line)["data"].map(canonicalJSON),
                   #"[{"id":"t1","title":"milk"},{"id":"t2","title":"eggs"}]"#, file: file, line: line)
    // With tags: not when the latest is named (weakly), else as any write.
    assertProblem(try client.put(path, "[1]", headers: ["If-None-Match": "W/\(tag(created))"]), 412, "precondition_failed", file: file, line: line)
    let next = assertVersion(try client.put(path, #"[{"id": "t1", "title": "milk"}]"#, headers: ["If-None-Match": tag(created - 1)]), created + 1, file: file, line: line)
    // Both headers: both must hold.
    assertProblem(try client.put(path, "[2]", headers: ["If-Match": tag(next), "If-None-Match": "*"]), 412, "precondition_failed", file: file, line: line)
    assertVersion(try client.put(path, "[2]", headers: ["If-Match": tag(next), "If-None-Match": tag(created)]), next + 1, file: file, line: line)
    assertVersion(try client.put(path, "[3]", headers: ["If-Match": "*"]), next + 2, file: file, line: line)
    // Once deleted, it may be created again.
    XCTAssertEqual(try client.delete(path).status, 204, file: file, line: line)
    assertVersion(try client.put(path, "[4]", headers: ["If-None-Match": "*"]), file: file, line: line)
    assertProblem(try client.put(path, "[5]", headers: ["If-None-Match": "*"]), 412, "precondition_failed", file: file, line: line)
}
