@testable import BatchDiffSource
import XCTest

/// The replication stream's messages, decoded from bytes laid out as PostgreSQL's
/// "Logical Replication Message Formats" and "Streaming Replication Protocol" say
/// (SourcedFeedTests follows a real server's).
final class ReplicationDecodingTests: XCTestCase {
    private func bytes(_ parts: Any...) -> [UInt8] {
        var out: [UInt8] = []
        for part in parts {
            switch part {
            case let text as String: out += Array(text.utf8)
            case let byte as UInt8: out.append(byte)
            case let value as UInt16: out += withUnsafeBytes(of: value.bigEndian, Array.init)
            case let value as UInt32: out += withUnsafeBytes(of: value.bigEndian, Array.init)
            case let value as Int32: out += withUnsafeBytes(of: value.bigEndian, Array.init)
            case let value as UInt64: out += withUnsafeBytes(of: value.bigEndian, Array.init)
            case let value as Int64: out += withUnsafeBytes(of: value.bigEndian, Array.init)
            default: XCTFail("no bytes for \(part)")
            }
        }
        return out
    }

    private func decode(_ bytes: [UInt8]) throws -> PgOutputMessage { try PgOutputMessage(decoding: bytes[...]) }

    func testEveryMessageKind() throws {
        XCTAssertEqual(try decode(bytes("B", UInt64(0x1_0000_0020), Int64(5), UInt32(742))), .begin(finalPosition: 0x1_0000_0020, xid: 742))
        XCTAssertEqual(
            try decode(bytes("C", UInt8(0), UInt64(0x10), UInt64(0x28), Int64(99))), .commit(position: 0x10, endPosition: 0x28, commitTime: 99)
        )
        let relation = bytes(
            "R", UInt32(16385), "public", UInt8(0), "todos", UInt8(0), UInt8(ascii: "d"), UInt16(2),
            UInt8(1), "id", UInt8(0), UInt32(23), Int32(-1), UInt8(0), "title", UInt8(0), UInt32(25), Int32(-1)
        )
        XCTAssertEqual(try decode(relation), .relation(.init(id: 16385, namespace: "public", name: "todos", columns: [
            .init(isKey: true, name: "id", typeOID: 23), .init(isKey: false, name: "title", typeOID: 25),
        ])))
        let row = bytes(UInt16(3), "t", Int32(1), "7", "n", "u")
        XCTAssertEqual(try decode(bytes("I", UInt32(16385), "N") + row), .insert(relation: 16385, new: [.text(Array("7".utf8)), .null, .unchangedToast]))
        XCTAssertEqual(try decode(bytes("U", UInt32(16385), "N") + row), .update(relation: 16385, old: nil, new: [.text(Array("7".utf8)), .null, .unchangedToast]))
        let key = bytes(UInt16(1), "t", Int32(1), "6")
        XCTAssertEqual(
            try decode(bytes("U", UInt32(16385), "K") + key + bytes("N") + row),
            .update(relation: 16385, old: [.text(Array("6".utf8))], new: [.text(Array("7".utf8)), .null, .unchangedToast])
        )
        XCTAssertEqual(try decode(bytes("D", UInt32(16385), "O") + key), .delete(relation: 16385, old: [.text(Array("6".utf8))]))
        XCTAssertEqual(try decode(bytes("T", UInt32(2), UInt8(1), UInt32(16385), UInt32(16390))), .truncate(relations: [16385, 16390]))
        XCTAssertEqual(try decode(bytes("O", UInt64(1), "origin", UInt8(0))), .other(kind: UInt8(ascii: "O")))
    }

    func testMessagesThatDoNotReadAreErrors() {
        XCTAssertThrowsError(try decode(bytes("B", UInt64(1))))  // cut short
        XCTAssertThrowsError(try decode(bytes("I", UInt32(1), "N", UInt16(1), "t", Int32(10), "ab")))  // a value longer than the message
        XCTAssertThrowsError(try decode(bytes("I", UInt32(1), "N", UInt16(1), "b", Int32(1), "a")))  // binary was not asked for
        XCTAssertThrowsError(try decode(bytes("D", UInt32(1), "N", UInt16(0))))
        XCTAssertThrowsError(try decode(bytes("R", UInt32(1), "public")))  // a name without its NUL
        XCTAssertThrowsError(try decode([]))
    }

    func testFramesAndTheStatusUpdate() throws {
        let data = bytes("w", UInt64(0x20), UInt64(0x40), Int64(7), "B")
        guard case .data(let start, let end, let time, let payload) = try ReplicationFrame(decoding: data) else { return XCTFail("not data") }
        XCTAssertEqual([start, end], [0x20, 0x40])
        XCTAssertEqual(time, 7)
        XCTAssertEqual(Array(payload), Array("B".utf8))
        XCTAssertEqual(try ReplicationFrame(decoding: bytes("k", UInt64(0x50), Int64(8), UInt8(1))), .keepalive(serverEnd: 0x50, sendTime: 8, replyRequested: true))
        XCTAssertThrowsError(try ReplicationFrame(decoding: bytes("x")))
        XCTAssertEqual(
            ReplicationFrame.statusUpdate(flushed: 0x1_0000_0002, now: 3),
            bytes("r", UInt64(0x1_0000_0002), UInt64(0x1_0000_0002), UInt64(0x1_0000_0002), Int64(3), UInt8(0))
        )
        XCTAssertEqual(LogPosition("16/B374D848")?.value, 0x16_B374_D848)
        XCTAssertEqual(LogPosition(0x16_B374_D848).description, "16/B374D848")
        XCTAssertNil(LogPosition("16"))
    }
}
