import BatchDiffJSON
import TestSupport
import XCTest

/// Merge patches made from two objects' texts (`values=merge`, docs/batch-format.md §6):
/// applied to the old object by RFC 7396, each gives the new one; where none can, none is
/// made.
final class MergePatchMakingTests: XCTestCase {
    private func value(_ text: String) throws -> JSONValue {
        try JSONDocument(bytes: Array(text.utf8)).root
    }

    private func patch(_ old: String, _ new: String, ignoring: String? = nil) -> String? {
        JSONMergePatch.patch(from: Array(old.utf8)[...], to: Array(new.utf8)[...], ignoring: ignoring).map { String(decoding: $0, as: UTF8.self) }
    }

    func testAPatchNamesWhatChangedAndRemovesWhatWent() throws {
        XCTAssertEqual(patch(#"{"id":1,"a":1,"b":"x"}"#, #"{"id":1,"a":2,"b":"x"}"#), #"{"a":2}"#)
        XCTAssertEqual(patch(#"{"id":1,"a":1,"b":"x"}"#, #"{"id":1,"b":"x","c":[null,1]}"#), #"{"c":[null,1],"a":null}"#)
        XCTAssertEqual(patch(#"{"id":1,"n":{"x":1,"y":2}}"#, #"{"id":1,"n":{"x":1,"z":3}}"#), #"{"n":{"z":3,"y":null}}"#)
        XCTAssertEqual(patch(#"{"id":1,"n":5}"#, #"{"id":1,"n":{"x":1}}"#), #"{"n":{"x":1}}"#)
        XCTAssertEqual(patch(#"{"id":1,"a":1}"#, #"{"a":1,"id":1}"#), "{}")
        // Members found by name wherever they stand, names compared decoded.
        XCTAssertEqual(patch(#"{"id":1,"a":1,"b":2}"#, #"{"b":3,"id":1,"a":1}"#), #"{"b":3}"#)
        XCTAssertEqual(patch(#"{"id":1,"\u0061":1}"#, #"{"id":1,"a":2}"#), #"{"a":2}"#)
        // A section's header: its items are not the header's.
        XCTAssertEqual(patch(#"{"id":"s","items":[1],"t":1}"#, #"{"id":"s","items":[2],"t":2}"#, ignoring: "items"), #"{"t":2}"#)
    }

    func testWhatNoPatchCanSayHasNone() throws {
        XCTAssertNil(patch(#"{"id":1,"a":1}"#, #"{"id":1,"a":null}"#), "a member set to null")
        XCTAssertNil(patch(#"{"id":1,"a":1}"#, #"{"id":1,"a":{"b":null}}"#), "an object carried whole holding a null")
        XCTAssertNil(patch(#"{"id":1,"n":{"b":1}}"#, #"{"id":1,"n":{"b":null}}"#), "a nested member set to null")
        XCTAssertNil(patch(#""r1""#, #"{"id":"r1"}"#), "a scalar before")
        XCTAssertNil(patch(#"{"id":"r1"}"#, #""r1""#), "a scalar after")
        let many = (0..<20).map { "\"m\($0)\":\($0)" }.joined(separator: ",")
        XCTAssertEqual(patch("{\(many)}", "{\"n\":0,\(many)}"), #"{"n":0}"#)
    }

    /// Random objects, members added, changed, removed, nested, set to null: every patch
    /// made, applied to the old object, gives the new one (as values); none is made only
    /// where a null would be lost.
    func testRandomPairsPatchedGiveTheNewObject() throws {
        var random = SplitMix64(state: 7)
        func scalar() -> String {
            ["1", "2.5", "\"a\"", "\"b\"", "true", "false", "null", "[]", "[1,null]"].randomElement(using: &random)!
        }
        func object(depth: Int) -> [String: String] {
            var members: [String: String] = [:]
            for name in ["a", "b", "c", "d", "e"] where Bool.random(using: &random) {
                members[name] = depth < 2 && Int.random(in: 0..<4, using: &random) == 0 ? text(object(depth: depth + 1)) : scalar()
            }
            return members
        }
        func text(_ members: [String: String]) -> String {
            "{" + members.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
        }
        var made = 0
        for _ in 0..<2000 {
            let (old, new) = (text(object(depth: 0)), text(object(depth: 0)))
            guard let patch = JSONMergePatch.patch(from: Array(old.utf8)[...], to: Array(new.utf8)[...]) else {
                XCTAssertTrue(new.contains("null"), "no patch, though nothing in \(new) is null")
                continue
            }
            made += 1
            let applied = JSONMergePatch.applying(try JSONDocument(bytes: patch).root, to: try value(old))
            XCTAssertEqual(try JSONDocument(bytes: applied).root.fingerprint, try value(new).fingerprint, "\(old) -> \(new) by \(String(decoding: patch, as: UTF8.self))")
        }
        XCTAssertGreaterThan(made, 500)
    }
}
