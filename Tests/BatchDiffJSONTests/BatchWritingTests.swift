import BatchDiff
import BatchDiffJSON
import Foundation
import XCTest

/// Batches written as JSON read back with Foundation in the format of docs/batch-format.md §2.
final class BatchWritingTests: XCTestCase {
    private func collection(_ text: String) throws -> JSONCollection {
        try JSONDocument(bytes: Array(text.utf8)).root.collection(idKey: "id", path: "test")
    }

    func testListBatchJSON() throws {
        let batch = try JSONBatch(from: collection(#"["a","b","c"]"#), to: collection(#"["c","a","d"]"#), options: DiffOptions())
        var output = JSONOutput()
        try output.batch(batch)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(output.bytes)) as? [String: Any])
        XCTAssertNil(object["sections"], "lists have no sections member")
        let rows = try XCTUnwrap(object["rows"] as? [String: Any])
        XCTAssertEqual(rows["deleted"] as? [Int], [1])
        XCTAssertEqual(rows["inserted"] as? [Int], [2])
        XCTAssertEqual((rows["moved"] as? [[String: Int]])?.first, ["from": 2, "to": 0])
        XCTAssertEqual(object["counts"] as? [String: Int], ["old": 3, "new": 3])
    }

    func testShapeMismatchIsAnError() throws {
        XCTAssertThrowsError(try JSONBatch(from: collection("[1]"), to: collection(#"{"sections":[]}"#), options: DiffOptions()))
        XCTAssertThrowsError(try collection(#"{"sections":[{"id":1}]}"#)) { error in
            XCTAssertEqual((error as? CollectionShapeError)?.path, "test.sections[0].items")
        }
        XCTAssertThrowsError(try collection(#"{"rows":[]}"#))
        XCTAssertThrowsError(try collection("42"))
    }

    func testEscapedStringsAreWrittenAsValidJSON() throws {
        var output = JSONOutput()
        output.string("quote \" backslash \\ newline \n tab \t bell \u{07} é")
        XCTAssertEqual(try JSONSerialization.jsonObject(with: Data(output.bytes), options: .fragmentsAllowed) as? String,
                       "quote \" backslash \\ newline \n tab \t bell \u{07} é")
    }
}
