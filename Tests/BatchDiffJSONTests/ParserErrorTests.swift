import BatchDiffJSON
import XCTest

/// Malformed input is an error with the byte offset and what was expected, never a crash.
final class ParserErrorTests: XCTestCase {
    private func error(_ bytes: [UInt8]) -> JSONSyntaxError? {
        do {
            _ = try JSONDocument(bytes: bytes)
            return nil
        } catch {
            return error
        }
    }

    private func error(_ text: String) -> JSONSyntaxError? { error(Array(text.utf8)) }

    func testOffsetsAndReasons() {
        XCTAssertEqual(error("[1,2")?.offset, 4)
        XCTAssertEqual(error("[1,2}")?.offset, 4)
        XCTAssertTrue(error("[1,2}")?.reason.contains("expected ',' or ']'") ?? false)
        XCTAssertEqual(error(#"{"a" 1}"#)?.offset, 5)
        XCTAssertEqual(error("")?.offset, 0)
        XCTAssertEqual(error("[1] x")?.offset, 4)
        XCTAssertNotNil(error("[01]"))
        XCTAssertNotNil(error("[1.]"))
        XCTAssertNotNil(error("[-]"))
        XCTAssertNotNil(error("[tru]"))
        XCTAssertNotNil(error(#"["\x"]"#))
        XCTAssertNotNil(error("[\"a\u{01}\"]"))
        XCTAssertNotNil(error(#"["\ud800"]"#), "a lone surrogate")
        XCTAssertNotNil(error(#"["\udc00x"]"#), "a lone low surrogate")
        XCTAssertNotNil(error("[1e]"))
    }

    func testInvalidUTF8IsRejected() {
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xE2, 0x82, 0x22], [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22]] {
            XCTAssertTrue(error(bytes)?.reason.contains("UTF-8") ?? false, "\(bytes)")
        }
        XCTAssertNil(error(Array("\"€ 😀 é\"".utf8)))
    }

    func testDeepNestingIsAnErrorNotAStackOverflow() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        XCTAssertTrue(error(deep)?.reason.contains("nesting deeper") ?? false)
        let fine = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        XCTAssertNil(error(fine))
    }

    func testHugeNumbersAreAccepted() {
        XCTAssertNil(error("[1e999999, -1E-999999, " + String(repeating: "9", count: 5000) + "]"))
        XCTAssertNotNil(error("[1e99999999999999999999]"), "an exponent past any range")
    }

    func testTruncatedInputsFailEverywhere() {
        let text = #"{"sections":[{"id":"a","items":[{"id":1,"name":"x\u00e9"},2.5e3,true,null]}]}"#
        for length in 0..<text.utf8.count {
            XCTAssertNotNil(error(Array(text.utf8.prefix(length))), "prefix of \(length) bytes")
        }
        XCTAssertNil(error(text))
    }
}
