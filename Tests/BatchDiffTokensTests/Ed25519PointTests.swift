@testable import BatchDiffTokens
import TestSupport
import XCTest

/// Which 32-byte encodings are Ed25519 keys (canonical points of the prime-order group),
/// and which signature Rs are of small order: RFC 8032's keys, libsodium's list of small-
/// order points, non-canonical and mixed-order encodings, random bytes.
final class Ed25519PointTests: XCTestCase {
    private typealias Point = Ed25519Point.ExtendedPoint
    private let ffs = String(repeating: "ff", count: 30)
    private let baseHex = "5866666666666666666666666666666666666666666666666666666666666666"
    private let orderEightHex = "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"

    private func hex(_ text: String) -> [UInt8] {
        let nibbles = text.utf8.map { $0 <= 57 ? $0 - 48 : ($0 | 0x20) - 87 }
        return stride(from: 0, to: nibbles.count, by: 2).map { nibbles[$0] << 4 | nibbles[$0 + 1] }
    }

    private func point(_ encoding: [UInt8]) throws -> Point {
        guard case .point(let point) = Ed25519Point.decode(encoding, strict: true) else { throw XCTSkip("not a point") }
        return point
    }

    /// The canonical encodings of the eight points of small order.
    private var smallOrderHex: [String] {
        [
            "01" + String(repeating: "00", count: 31), "ec" + ffs + "7f", String(repeating: "00", count: 32),
            String(repeating: "00", count: 31) + "80", orderEightHex, "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
            "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
        ]
    }

    func testKeysOfRFC8032AndMultiplesOfTheBaseAreOfPrimeOrder() throws {
        for key in [
            baseHex, "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
            "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
        ] {
            XCTAssertEqual(Ed25519Point.kind(of: hex(key)), .primeOrder, key)
        }
        let base = try point(hex(baseHex))
        XCTAssertEqual(base.encoded, hex(baseHex))
        XCTAssertTrue(base.multiplied(by: Ed25519Point.order).isIdentity)
        var random = SplitMix64(state: 5)
        for _ in 0..<5 {
            let scalar = SIMD4<UInt64>(random.next(), random.next(), random.next(), random.next() >> 4)
            XCTAssertEqual(Ed25519Point.kind(of: base.multiplied(by: scalar).encoded), .primeOrder)
        }
    }

    func testPointsOfSmallOrderAreTheMultiplesOfOneOfOrderEight() throws {
        for encoding in smallOrderHex {
            XCTAssertEqual(Ed25519Point.kind(of: hex(encoding)), .smallOrder, encoding)
            XCTAssertTrue(Ed25519Point.hasSmallOrder(hex(encoding)), encoding)
        }
        let orderEight = try point(hex(orderEightHex))
        var multiples = Set<[UInt8]>()
        var multiple = Point.identity
        for _ in 0..<8 {
            multiples.insert(multiple.encoded)
            multiple = multiple.adding(orderEight)
        }
        XCTAssertTrue(multiple.isIdentity)
        XCTAssertEqual(multiples, Set(smallOrderHex.map(hex)))
    }

    func testNonCanonicalMixedAndOffTheCurveEncodingsAreNoKeys() throws {
        for encoding in ["ed" + ffs + "7f", "ee" + ffs + "7f", "01" + String(repeating: "00", count: 30) + "80", "ec" + ffs + "ff"] {
            XCTAssertEqual(Ed25519Point.kind(of: hex(encoding)), .notCanonical, encoding)
            XCTAssertTrue(Ed25519Point.hasSmallOrder(hex(encoding)), "a non-canonical small-order R: \(encoding)")
        }
        for bytes in [[], [UInt8](repeating: 0, count: 31), [UInt8](repeating: 0, count: 33)] {
            XCTAssertEqual(Ed25519Point.kind(of: bytes), .notCanonical)
            XCTAssertFalse(Ed25519Point.hasSmallOrder(bytes))
        }
        let base = try point(hex(baseHex))
        for encoding in smallOrderHex.dropFirst() {
            let mixed = base.adding(try point(hex(encoding))).encoded
            XCTAssertEqual(Ed25519Point.kind(of: mixed), .mixedOrder, encoding)
            XCTAssertFalse(Ed25519Point.hasSmallOrder(mixed))
        }
        XCTAssertEqual(Ed25519Point.kind(of: hex("02" + String(repeating: "00", count: 31))), .notOnCurve)
        XCTAssertFalse(Ed25519Point.hasSmallOrder(hex(baseHex)))
    }

    /// Random bytes never trap, and the two checks agree.
    func testRandomBytesAreClassifiedConsistently() throws {
        var random = SplitMix64(state: 300)
        for _ in 0..<300 {
            let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &random) }
            let kind = Ed25519Point.kind(of: bytes)
            switch kind {
            case .notOnCurve: XCTAssertFalse(Ed25519Point.hasSmallOrder(bytes))
            case .notCanonical: break
            default:
                XCTAssertEqual(Ed25519Point.hasSmallOrder(bytes), kind == .smallOrder)
                XCTAssertEqual(try point(bytes).encoded, bytes)
            }
        }
    }
}
