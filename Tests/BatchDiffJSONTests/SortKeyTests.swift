@testable import BatchDiffJSON
import Foundation
import TestSupport
import XCTest

/// Orders of rows by members they carry (docs/feeds.md §14): how key values compare, read
/// from the rows' texts, against models that parse them with Foundation.
final class SortKeyTests: XCTestCase {
    private func keys(_ row: String, _ order: String) throws -> [SortKey] {
        try SortOrder(parsing: order).keys(of: Array(row.utf8)[...])
    }

    /// How the rows compare; on the way, that the first keys' prefixes a sort compares first
    /// (``SortKey/orderPrefix``) never say otherwise.
    private func compare(_ left: String, _ right: String, _ order: String = "k") throws -> Int {
        let order = try SortOrder(parsing: order)
        let (leftKeys, rightKeys) = (try order.keys(of: Array(left.utf8)[...]), try order.keys(of: Array(right.utf8)[...]))
        let found = order.compare(leftKeys, rightKeys)
        let byFirst = SortKey.compare(leftKeys[0], rightKeys[0])
        let (leftPrefix, rightPrefix) = (leftKeys[0].orderPrefix, rightKeys[0].orderPrefix)
        XCTAssertTrue(byFirst < 0 ? leftPrefix <= rightPrefix : byFirst == 0 ? leftPrefix == rightPrefix : leftPrefix >= rightPrefix,
                      "prefixes \(leftPrefix), \(rightPrefix) of \(left), \(right)")
        return found
    }

    /// Numbers compare by their exact decimal value, however they are written: against
    /// `Decimal` on random numbers of up to 20 digits, written as integers, with a point or
    /// with an exponent.
    func testNumbersCompareByTheirExactValue() throws {
        var random = SplitMix64(state: 39)
        func written() -> (text: String, value: Decimal) {
            let digits = String((0..<(1 + random.below(20))).map { _ in Character(String(random.below(10))) })
            let exponent = random.below(41) - 20
            let negative = random.chance(40)
            let value = Decimal(string: (negative ? "-" : "") + digits + "e\(exponent)")!
            let sign = negative ? "-" : ""
            let trimmed = String(digits.drop { $0 == "0" })
            let mantissa = trimmed.isEmpty ? "0" : trimmed
            switch random.below(3) {
            case 0 where exponent >= 0:
                return (sign + mantissa + String(repeating: "0", count: exponent), value)
            case 1 where exponent < 0:
                let padded = String(repeating: "0", count: max(0, -exponent - mantissa.count + 1)) + mantissa
                let point = padded.count + exponent
                return (sign + padded.prefix(point) + "." + padded.dropFirst(point), value)
            default:
                return (sign + mantissa + (random.chance(50) ? "e" : "E+").replacingOccurrences(of: "+", with: exponent < 0 ? "" : "+") + "\(exponent)", value)
            }
        }
        for _ in 0..<3000 {
            let (left, right) = (written(), written())
            let expected = left.value < right.value ? -1 : left.value == right.value ? 0 : 1
            let found = try compare(#"{"k":\#(left.text)}"#, #"{"k":\#(right.text)}"#)
            XCTAssertEqual(found.signum(), expected, "\(left.text) against \(right.text)")
        }
        XCTAssertGreaterThan(try compare(#"{"k":9007199254740993}"#, #"{"k":9007199254740992}"#), 0, "no rounding through a Double")
        XCTAssertEqual(try compare(#"{"k":1}"#, #"{"k":10e-1}"#), 0)
        XCTAssertEqual(try compare(#"{"k":-0}"#, #"{"k":0.000e7}"#), 0)
        XCTAssertGreaterThan(try compare(#"{"k":1e400}"#, #"{"k":9e399}"#), 0, "beyond any binary floating point")
        XCTAssertLessThan(try compare(#"{"k":-1e400}"#, #"{"k":-9e399}"#), 0)
    }

    /// Strings compare by Unicode scalars, as their UTF-8 bytes do, escapes decoded: against
    /// Swift's own UTF-8 of random strings written with and without escapes.
    func testStringsCompareByTheirScalarsWithEscapesDecoded() throws {
        var random = SplitMix64(state: 14)
        let alphabet: [Unicode.Scalar] = ["a", "b", "Z", "\"", "\\", "/", "\u{7F}", "\u{E9}", "\u{FFFF}", "\u{1F600}", "\u{10FFFF}"]
        func written() -> (text: String, value: String) {
            let scalars = (0..<random.below(5)).map { _ in alphabet[random.below(alphabet.count)] }
            var text = ""
            for scalar in scalars {
                switch scalar {
                case "\"": text += "\\\""
                case "\\": text += "\\\\"
                default:
                    if random.chance(40) {
                        for unit in String(scalar).utf16 { text += String(format: "\\u%04x", unit) }
                    } else {
                        text.unicodeScalars.append(scalar)
                    }
                }
            }
            var value = ""
            value.unicodeScalars.append(contentsOf: scalars)
            return (text, value)
        }
        for _ in 0..<3000 {
            let (left, right) = (written(), written())
            let (l, r) = (Array(left.value.utf8), Array(right.value.utf8))
            let expected = l == r ? 0 : l.lexicographicallyPrecedes(r) ? -1 : 1
            XCTAssertEqual(try compare(#"{"k":"\#(left.text)"}"#, #"{"k":"\#(right.text)"}"#).signum(), expected, "\(left.text) against \(right.text)")
        }
    }

    /// Kinds come in their order: missing and null tie, then false, true, numbers, strings.
    func testKindsComeInTheirOrder() throws {
        let rows = [#"{}"#, #"{"k":null}"#, #"{"k":false}"#, #"{"k":true}"#, #"{"k":-5}"#, #"{"k":7}"#, #"{"k":""}"#, #"{"k":"a"}"#]
        for (i, left) in rows.enumerated() {
            for (j, right) in rows.enumerated() {
                let expected = i == j || (i < 2 && j < 2) ? 0 : i < j ? -1 : 1
                XCTAssertEqual(try compare(left, right).signum(), expected, "\(left) against \(right)")
            }
        }
        XCTAssertEqual(try compare("5", #"{"k":null}"#), 0, "a row that is not an object has no members")
    }

    /// A key is the member's first value among the row's own members (never one nested in
    /// another value), its name read with escapes decoded, whitespace anywhere between tokens.
    func testKeysAreReadFromTheRowsOwnMembers() throws {
        let row = #" { "a" : {"k": 1, "s": [ "k", {"k":2} ]} , "s\u0063ore" : 3 , "k" : "x,}" , "k": 9 } "#
        let read = try keys(row, "-score,k,a2")
        XCTAssertEqual(read.count, 3)
        XCTAssertEqual(try compare(row, #"{"score":3,"k":"x,}"}"#, "score,k"), 0, "the first k, after nested ones")
        XCTAssertEqual(try compare(row, #"{"score":3,"k":"x,}","a2":null}"#, "score,k,a2"), 0)
        XCTAssertThrowsError(try keys(#"{"id":1,"k":[1]}"#, "k")) { error in
            XCTAssertEqual((error as? SortKeyError)?.description, #"its "k" is an array, which does not sort"#)
        }
        XCTAssertThrowsError(try keys(#"{"k":{"a":1}}"#, "id,k")) { error in
            XCTAssertEqual((error as? SortKeyError)?.member, "k")
        }
    }

    /// Descending keys reverse their comparison; later keys decide only ties.
    func testDescendingKeysAndLaterKeys() throws {
        XCTAssertLessThan(try compare(#"{"s":9,"n":"b"}"#, #"{"s":1,"n":"a"}"#, "-s,n"), 0)
        XCTAssertLessThan(try compare(#"{"s":1,"n":"a"}"#, #"{"s":1,"n":"b"}"#, "-s,n"), 0)
        XCTAssertGreaterThan(try compare(#"{"s":1,"n":"a"}"#, #"{"s":1,"n":"b"}"#, "-s,-n"), 0)
    }

    /// An order reads back as it is written; one that names no member, a member twice, an
    /// empty or too long name, or too many members, does not read.
    func testOrdersReadAndWrite() throws {
        XCTAssertEqual(try SortOrder(parsing: "-score,id").description, "-score,id")
        XCTAssertEqual(try SortOrder(parsing: "-score,id").keys.map(\.descending), [true, false])
        for bad in ["", "a,,b", "-", "a,a", "a,-a", String(repeating: "x", count: 129), (1...9).map { "m\($0)" }.joined(separator: ",")] {
            XCTAssertThrowsError(try SortOrder(parsing: bad), bad)
        }
    }
}
