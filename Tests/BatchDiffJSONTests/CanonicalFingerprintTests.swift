import BatchDiffJSON
import XCTest

/// Content equality is JSON equality: member order ignored, 1 == 1.0, escapes decoded.
final class CanonicalFingerprintTests: XCTestCase {
    private func print(_ text: String) throws -> Fingerprint {
        try JSONDocument(bytes: Array(text.utf8)).root.fingerprint
    }

    func testEqualValuesShareAFingerprint() throws {
        let equalPairs = [
            (#"{"a":1,"b":[true,null]}"#, #"{ "b" : [ true , null ] , "a" : 1 }"#),
            ("1", "1.0"), ("1", "10e-1"), ("100", "1e2"), ("0", "-0.0"), ("1.5", "15E-1"), ("-2", "-2.000"),
            (#""é""#, #""\u00e9""#), (#""😀""#, #""\ud83d\ude00""#), (#""a/b""#, #""a\/b""#),
            (#"{"x":{"y":1,"z":2}}"#, #"{"x":{"z":2.0,"y":1}}"#),
        ]
        for (lhs, rhs) in equalPairs {
            XCTAssertEqual(try print(lhs), try print(rhs), "\(lhs) and \(rhs) are equal JSON")
        }
    }

    func testDifferentValuesDiffer() throws {
        let differentPairs = [
            ("1", #""1""#), ("true", "1"), ("null", "false"), ("[1,2]", "[2,1]"), (#"{"a":1}"#, #"{"a":1,"b":1}"#),
            ("[]", "{}"), (#""""#, "[]"), ("1", "1.0000000000000000000001"), ("12345678901234567890", "12345678901234567891"),
            (#"{"a":[1]}"#, #"{"a":1}"#), (#""é""#, #""e\u0301""#), ("[[]]", "[]"), (#"{"a":1,"b":2}"#, #"{"a":2,"b":1}"#),
        ]
        for (lhs, rhs) in differentPairs {
            XCTAssertNotEqual(try print(lhs), try print(rhs), "\(lhs) and \(rhs) are different JSON")
        }
    }

    func testIdentityComesFromTheIdMemberOrTheWholeItem() throws {
        let document = try JSONDocument(bytes: Array(#"[{"id":7,"t":"x"},{"key":"k","id":7.0},"plain",{"t":1}]"#.utf8))
        guard case .list(let items) = try document.root.collection(idKey: "id", path: "old") else { return XCTFail("a list") }
        XCTAssertEqual(items.count, 4)
        XCTAssertEqual(items[0].identity, items[1].identity, "7 and 7.0 are the same identity")
        XCTAssertNotEqual(items[0].content, items[1].content)
        XCTAssertEqual(items[2].identity, try print(#""plain""#))
        XCTAssertEqual(items[3].identity, items[3].content, "without the id member the item is its own identity")
        XCTAssertEqual(String(decoding: document.bytes[items[1].span], as: UTF8.self), #"{"key":"k","id":7.0}"#)
    }

    func testOnlyAStringOrANumberIsAnIdentity() throws {
        let text = #"[{"id":null,"v":1},{"id":true,"v":1},{"id":{"k":1},"v":1},{"id":[1],"v":1},{"id":"s","v":1},{"id":2,"v":1}]"#
        guard case .list(let items) = try JSONDocument(bytes: Array(text.utf8)).root.collection(idKey: "id", path: "old") else {
            return XCTFail("a list")
        }
        for item in items[0..<4] {
            XCTAssertEqual(item.identity, item.content, "an id member that is not a string or a number is no identity")
        }
        XCTAssertEqual(items[4].identity, try print(#""s""#))
        XCTAssertEqual(items[5].identity, try print("2"))
        let sectioned = try JSONDocument(bytes: Array(#"{"sections":[{"id":null,"t":1,"items":[]},{"id":"a","items":[]}]}"#.utf8))
        guard case .sectioned(let sections) = try sectioned.root.collection(idKey: "id", path: "old") else { return XCTFail("sectioned") }
        XCTAssertEqual(sections[0].header.identity, sections[0].header.content, "a null section id is no identity")
        XCTAssertEqual(sections[1].header.identity, try print(#""a""#))
    }

    func testSectionHeaderContentLeavesItemsOut() throws {
        let old = try JSONDocument(bytes: Array(#"{"sections":[{"id":"a","title":"A","items":[1]}]}"#.utf8))
        let new = try JSONDocument(bytes: Array(#"{"sections":[{"items":[1,2],"title":"A","id":"a"}]}"#.utf8))
        guard case .sectioned(let before) = try old.root.collection(idKey: "id", path: "old"),
              case .sectioned(let after) = try new.root.collection(idKey: "id", path: "new")
        else { return XCTFail("sectioned") }
        XCTAssertEqual(before[0].header.identity, after[0].header.identity)
        XCTAssertEqual(before[0].header.content, after[0].header.content, "only items changed; the header did not")
    }
}
