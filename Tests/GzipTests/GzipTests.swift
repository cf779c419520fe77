import Gzip
import TestSupport
import XCTest

final class GzipTests: XCTestCase {
    /// Inflates `compressed` in pieces of random sizes, as a body arrives.
    private func inflate(_ compressed: [UInt8], limit: Int = 1 << 30, random: inout SplitMix64) throws -> (bytes: [UInt8], atEnd: Bool) {
        let inflater = GzipInflater()
        var output: [UInt8] = []
        var offset = 0
        while offset < compressed.count {
            let size = min(compressed.count - offset, Int.random(in: 1...70_000, using: &random))
            let piece = Array(compressed[offset..<(offset + size)])
            try piece.withUnsafeBytes { try inflater.inflate($0, into: &output, limit: limit) }
            offset += size
        }
        return (output, inflater.isAtEnd)
    }

    func testRoundTripsInPiecesOfAnySize() throws {
        var random = SplitMix64(state: 3)
        for size in [0, 1, 100, 65_535, 65_536, 65_537, 300_000, 2_000_000] {
            // Text that compresses a lot (long runs fill many output chunks per input piece)
            // and bytes that do not.
            let text = (0..<size).map { UInt8(ascii: "a") + UInt8($0 % 7 == 0 ? 1 : 0) }
            let noise = (0..<size).map { _ in UInt8.random(in: 0...255, using: &random) }
            for bytes in [text, noise] {
                let (inflated, atEnd) = try inflate(Gzip.compress(bytes), random: &random)
                XCTAssertEqual(inflated, bytes, "size \(size)")
                XCTAssertTrue(atEnd)
            }
        }
    }

    func testConcatenatedMembersAreOneBody() throws {
        var random = SplitMix64(state: 4)
        let (inflated, atEnd) = try inflate(Gzip.compress(Array("[1,".utf8)) + Gzip.compress(Array("2]".utf8)), random: &random)
        XCTAssertEqual(String(decoding: inflated, as: UTF8.self), "[1,2]")
        XCTAssertTrue(atEnd)
    }

    func testALimitStopsABomb() {
        var random = SplitMix64(state: 5)
        let bomb = Gzip.compress([UInt8](repeating: 0, count: 50_000_000))
        XCTAssertLessThan(bomb.count * 100, 50_000_000, "a hundredth of what it inflates to")
        XCTAssertThrowsError(try inflate(bomb, limit: 1_000_000, random: &random)) { error in
            XCTAssertEqual(error as? GzipError, .tooLarge)
        }
    }

    func testDamagedAndCutShortBodies() throws {
        var random = SplitMix64(state: 6)
        XCTAssertThrowsError(try inflate(Array("{\"not\": \"gzip\"}".utf8), random: &random)) { error in
            guard case .corrupt? = error as? GzipError else { return XCTFail("\(error)") }
        }
        let compressed = Gzip.compress(Array(repeating: UInt8(ascii: "x"), count: 10_000))
        let (_, atEnd) = try inflate(Array(compressed.dropLast(4)), random: &random)
        XCTAssertFalse(atEnd, "a member without its trailer is not at its end")
        var damaged = compressed
        damaged[damaged.count - 3] ^= 0xFF  // the length in the trailer
        XCTAssertThrowsError(try inflate(damaged, random: &random))
    }

    func testJSONShrinksToWellUnderHalf() {
        let json = Array((0..<2000).map { #"{"id":\#($0),"title":"Item number \#($0)","price":\#($0 % 97).5,"tags":["alpha","beta"]}"# }.joined(separator: ",").utf8)
        XCTAssertLessThan(Gzip.compress(json).count * 4, json.count)
    }
}
