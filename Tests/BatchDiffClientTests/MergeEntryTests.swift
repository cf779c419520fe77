import BatchDiff
import BatchDiffClient
import Foundation
import XCTest

/// `values=merge` answers (docs/batch-format.md §6) as the client reads and applies them.
final class MergeEntryTests: XCTestCase {
    private func json(_ text: String) throws -> JSON {
        try JSONDecoder().decode(JSON.self, from: Data(text.utf8))
    }

    private func changes(_ text: String) throws -> FeedChanges<JSON, JSON> {
        try JSONDecoder().decode(FeedChanges<JSON, JSON>.self, from: Data(text.utf8))
    }

    /// RFC 7396 Appendix A, every example.
    func testMergingIsRFC7396() throws {
        let examples: [(String, String, String)] = [
            (#"{"a":"b"}"#, #"{"a":"c"}"#, #"{"a":"c"}"#), (#"{"a":"b"}"#, #"{"b":"c"}"#, #"{"a":"b","b":"c"}"#),
            (#"{"a":"b"}"#, #"{"a":null}"#, "{}"), (#"{"a":"b","b":"c"}"#, #"{"a":null}"#, #"{"b":"c"}"#),
            (#"{"a":["b"]}"#, #"{"a":"c"}"#, #"{"a":"c"}"#), (#"{"a":"c"}"#, #"{"a":["b"]}"#, #"{"a":["b"]}"#),
            (#"{"a":{"b":"c"}}"#, #"{"a":{"b":"d","c":null}}"#, #"{"a":{"b":"d"}}"#), (#"{"a":[{"b":"c"}]}"#, #"{"a":[1]}"#, #"{"a":[1]}"#),
            (#"["a","b"]"#, #"["c","d"]"#, #"["c","d"]"#), (#"{"a":"b"}"#, #"["c"]"#, #"["c"]"#), (#"{"a":"foo"}"#, "null", "null"),
            (#"{"a":"foo"}"#, #""bar""#, #""bar""#), (#"{"e":null}"#, #"{"a":1}"#, #"{"e":null,"a":1}"#), (#"[1,2]"#, #"{"a":"b","c":null}"#, #"{"a":"b"}"#),
            ("{}", #"{"a":{"bb":{"ccc":null}}}"#, #"{"a":{"bb":{}}}"#),
        ]
        for (target, patch, result) in examples {
            XCTAssertEqual(try json(target).merging(try json(patch)), try json(result), "\(target) merged with \(patch)")
        }
    }

    func testAMergeAnswerIsMergedIntoTheRowsAndHeadersHeld() throws {
        let answer = try changes("""
            {"feed": "f", "from": 1, "to": 2, "sections": {"deleted": [], "inserted": [], "updated": [0, 1], "moved": [{"from": 1, "to": 0}]},
             "rows": {"reloaded": [[0, 1]], "inserted": [[1, 0]]}, "counts": {"old": [2, 1], "new": [1, 3]},
             "values": {"form": "merge", "rows": {"inserted": [{"merge": {"x": 1}}], "reloaded": [{"merge": {"v": null, "w": {"deep": 1}}}]},
                        "sections": {"inserted": [], "updated": [{"item": {"id": "b", "title": "B", "items": "left out"}}, {"merge": {"title": "A2"}}]}}}
            """)
        XCTAssertEqual(answer.values?.reloadedRows, [])
        let old = FeedCollection<JSON, JSON>.sectioned([
            Section(header: ["id": "a", "title": "A"], items: [["id": 1, "v": 1], ["id": 2, "v": 2]]),
            Section(header: ["id": "b"], items: [["id": 3]]),
        ])
        XCTAssertEqual(try answer.applied(to: old) { $0.identity() }, .sectioned([
            Section(header: ["id": "b", "title": "B"], items: [["id": 3]]),
            // An inserted row stays whole, whatever it reads.
            Section(header: ["id": "a", "title": "A2"], items: [["merge": ["x": 1]], ["id": 1, "v": 1], ["id": 2, "w": ["deep": 1]]]),
        ]))
    }

    /// A patch for a row that is not an object, or entries not aligned, do not fit: an error,
    /// never a wrong collection (the follower then fetches the whole collection).
    func testWhatAMergeCannotSayIsRefused() throws {
        let patch = try changes("""
            {"feed": "f", "from": 1, "to": 2, "rows": {"reloaded": [0]}, "counts": {"old": 1, "new": 1},
             "values": {"form": "merge", "rows": {"inserted": [], "reloaded": [{"merge": {"a": 1}}]}}}
            """)
        XCTAssertThrowsError(try patch.applied(to: .list(["a"])) { $0.identity() })
        XCTAssertEqual(try patch.applied(to: .list([["a": 0, "b": 1]])) { _ in 0 }, .list([["a": 1, "b": 1]]))
        let unaligned = try changes("""
            {"feed": "f", "from": 1, "to": 2, "rows": {"reloaded": [0]}, "counts": {"old": 1, "new": 1},
             "values": {"form": "merge", "rows": {"inserted": [], "reloaded": []}}}
            """)
        XCTAssertThrowsError(try unaligned.applied(to: .list([["a": 0]])) { _ in 0 })
        // Without the form, an entry is a whole row, whatever it reads.
        let whole = try changes("""
            {"feed": "f", "from": 1, "to": 2, "rows": {"reloaded": [0]}, "counts": {"old": 1, "new": 1},
             "values": {"rows": {"inserted": [], "reloaded": [{"merge": {"a": 1}}]}}}
            """)
        XCTAssertEqual(try whole.applied(to: .list([["merge": ["a": 0]]])) { _ in 0 }, .list([["merge": ["a": 1]]]))
    }
}
