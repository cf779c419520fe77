@testable import BatchDiff
import XCTest

/// String identities are hashed by their UTF-8 (StringIdentityHash), yet strings that are
/// equal hash alike and pair, as `hashValue` would have them.
final class StringIdentityHashTests: XCTestCase {
    private struct Row: Diffable, Equatable {
        let id: String
        var identity: String { id }
    }

    /// Pairs of different spellings of one string (`==` holds): ASCII and the three scalars
    /// canonically equivalent to ASCII ones, and non-ASCII ones composed and decomposed.
    private let equalSpellings: [(String, String)] = [
        ("K", "\u{212A}"), ("item;1", "item\u{037E}1"), ("`quoted`", "\u{1FEF}quoted\u{1FEF}"),
        ("Kelvin-K-with-a-long-tail-past-sixteen-bytes", "\u{212A}elvin-\u{212A}-with-a-long-tail-past-sixteen-bytes"),
        ("caf\u{E9}", "cafe\u{301}"), ("\u{212B}ngstr\u{F6}m", "A\u{30A}ngstro\u{308}m"),
    ]

    /// The three scalars the hash maps are all there are: no other scalar is equal, as a
    /// string, to a string of one ASCII character (checked over every scalar, by the
    /// standard library's hash, which hashes strings as they compare, then by `==`).
    func testOnlyThreeScalarsEqualAnASCIIString() {
        let ascii = Dictionary(uniqueKeysWithValues: (0..<128).map { (String(UnicodeScalar(UInt8($0))).hashValue, String(UnicodeScalar(UInt8($0)))) })
        var equal: [UInt32] = []
        for value in UInt32(0x80)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let string = String(scalar)
            if let candidate = ascii[string.hashValue], candidate == string { equal.append(value) }
        }
        XCTAssertEqual(equal, [0x037E, 0x1FEF, 0x212A])
    }

    func testEqualStringsHashAlike() {
        for (one, other) in equalSpellings {
            XCTAssertEqual(one, other)
            XCTAssertEqual(StringIdentityHash.hash(one), StringIdentityHash.hash(other), "\(one.debugDescription) and \(other.debugDescription)")
        }
    }

    func testEqualStringsPairAcrossSpellings() {
        for (one, other) in equalSpellings {
            let batch = batch(from: [Row(id: "x"), Row(id: one)], to: [Row(id: other), Row(id: "x")])
            XCTAssertEqual(batch.rows.deleted, [], "\(one.debugDescription) was not paired with \(other.debugDescription)")
            XCTAssertEqual(batch.rows.moved.count, 1)
        }
    }

    /// Every length around the hash's 8- and 16-byte steps: strings that differ in one byte
    /// hash apart, and a string hashes as its copy does.
    func testLengthsAroundTheWordSteps() {
        for length in 0...40 {
            let base = String(repeating: "a", count: length)
            XCTAssertEqual(StringIdentityHash.hash(base), StringIdentityHash.hash(String(decoding: Array(base.utf8), as: UTF8.self)))
            for position in 0..<length {
                var bytes = Array(base.utf8)
                bytes[position] = UInt8(ascii: "b")
                XCTAssertNotEqual(StringIdentityHash.hash(base), StringIdentityHash.hash(String(decoding: bytes, as: UTF8.self)), "length \(length), byte \(position)")
            }
        }
    }
}
