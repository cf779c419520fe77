import BatchDiffJSON
import XCTest

/// The writer places commas and colons itself, in nested and empty containers alike.
final class JSONOutputTests: XCTestCase {
    func testNestedContainersAreSeparatedByTheWriter() throws {
        var output = JSONOutput()
        output.object { output in
            output.key("empty")
            output.object { _ in }
            output.key("list")
            output.array([[Int](), [1], [2, 3]]) { output, numbers in output.array(numbers) { $0.integer($1) } }
            output.key("kept")
            output.value(text: Array(#"{"a":[true,null]}"#.utf8))
            output.key("flag")
            output.bool(false)
            output.key("negative")
            output.integer(-42)
        }
        XCTAssertEqual(String(decoding: output.bytes, as: UTF8.self),
                       #"{"empty":{},"list":[[],[1],[2,3]],"kept":{"a":[true,null]},"flag":false,"negative":-42}"#)
    }

    func testAnObjectReadBackLeavesOutOneMember() throws {
        let section = try JSONDocument(bytes: Array(#"{"id":1,"items":[1,2],"title":"A \"quoted\" one"}"#.utf8)).root
        var output = JSONOutput()
        output.array([section, section]) { output, section in output.object(section, without: "items") }
        XCTAssertEqual(String(decoding: output.bytes, as: UTF8.self),
                       #"[{"id":1,"title":"A \"quoted\" one"},{"id":1,"title":"A \"quoted\" one"}]"#)
    }
}
