import BatchDiffJSON
import Foundation
import TestSupport
import XCTest

/// Fifty thousand mutated documents, from a fixed seed so a failure replays: the parser
/// never crashes, accepts exactly what Foundation's JSONSerialization accepts (except the
/// trailing commas Foundation lets through and RFC 8259 does not, and the numbers past
/// `Double`'s range that RFC 8259 allows and Foundation refuses), and points inside the
/// input when it refuses.
final class ParserFuzzTests: XCTestCase {
    private let seeds = [
        #"{"sections":[{"id":"a","title":"Ä \u00e9","items":[{"id":1,"n":-0.5e-3},true,null,[]]}]}"#,
        #"[1, 2.0, -3e+2, "x\n\"y\"", {"k": {"": [{}]}}, false]"#,
        #"{"old":["a","b"],"new":["b","c"],"options":{"idKey":"id","moves":false}}"#,
    ]
    private let alphabet = Array(#"{}[]:,"\ 0123456789.eE+-tfnulra\/"#.utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xA9, 0xFF, 0xED, 0xA0, 0xF0]

    func testMutatedDocumentsNeverCrashAndAgreeWithFoundation() {
        var rng = SplitMix64(state: 0x5EED_F022)
        var accepted = 0
        for round in 0..<50_000 {
            var bytes = Array(seeds[round % seeds.count].utf8)
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let index = Int.random(in: 0...bytes.count, using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0 where index < bytes.count: bytes.remove(at: index)
                case 1: bytes.insert(alphabet.randomElement(using: &rng)!, at: index)
                default: if index < bytes.count { bytes[index] = alphabet.randomElement(using: &rng)! }
                }
            }
            let foundation = (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) != nil
            do {
                _ = try JSONDocument(bytes: bytes)
                accepted += 1
                XCTAssertTrue(foundation || hasNumberPastDouble(bytes),
                              "accepted what Foundation refuses: \(String(decoding: bytes, as: UTF8.self).debugDescription)")
            } catch {
                XCTAssertTrue((0...bytes.count).contains(error.offset), "offset \(error.offset) outside \(bytes.count) bytes")
                XCTAssertFalse(foundation && !isTrailingComma(bytes, at: error.offset),
                               "refused what Foundation accepts (\(error)): \(String(decoding: bytes, as: UTF8.self).debugDescription)")
            }
        }
        XCTAssertGreaterThan(accepted, 50, "the mutations should leave some documents valid")
    }

    /// Whether the document holds a number literal that overflows `Double`, which
    /// Foundation refuses (it accepts underflow as zero).
    private func hasNumberPastDouble(_ bytes: [UInt8]) -> Bool {
        let text = String(decoding: bytes, as: UTF8.self)
        return text.matches(of: /[0-9]+(\.[0-9]+)?[eE][+-]?[0-9]+/).contains { Double($0.output.0)?.isInfinite ?? false }
    }

    /// Whether the byte at `offset` closes a container right after a comma.
    private func isTrailingComma(_ bytes: [UInt8], at offset: Int) -> Bool {
        guard offset < bytes.count, bytes[offset] == UInt8(ascii: "}") || bytes[offset] == UInt8(ascii: "]") else { return false }
        let before = bytes[..<offset].last { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }
        return before == UInt8(ascii: ",")
    }
}
