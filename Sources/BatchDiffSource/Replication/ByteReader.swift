/// Reads the big-endian fields of a replication message, front to back; every read past
/// the end throws, so a short or garbled message is an error, never a crash.
struct ByteReader {
    private let bytes: ArraySlice<UInt8>
    private var index: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        index = bytes.startIndex
    }

    var isAtEnd: Bool { index == bytes.endIndex }

    /// The bytes not read yet.
    var rest: ArraySlice<UInt8> { bytes[index...] }

    mutating func byte() throws(ReplicationDecodingError) -> UInt8 {
        guard index < bytes.endIndex else { throw .truncated }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func uint16() throws(ReplicationDecodingError) -> UInt16 { UInt16(truncatingIfNeeded: try unsigned(2)) }
    mutating func uint32() throws(ReplicationDecodingError) -> UInt32 { UInt32(truncatingIfNeeded: try unsigned(4)) }
    mutating func int32() throws(ReplicationDecodingError) -> Int32 { Int32(bitPattern: try uint32()) }
    mutating func uint64() throws(ReplicationDecodingError) -> UInt64 { try unsigned(8) }
    mutating func int64() throws(ReplicationDecodingError) -> Int64 { Int64(bitPattern: try unsigned(8)) }

    /// `count` bytes.
    mutating func bytes(_ count: Int) throws(ReplicationDecodingError) -> ArraySlice<UInt8> {
        guard count >= 0, bytes.endIndex - index >= count else { throw .truncated }
        defer { index += count }
        return bytes[index..<index + count]
    }

    /// A string ending in NUL (the NUL read, not returned).
    mutating func cString() throws(ReplicationDecodingError) -> String {
        guard let end = bytes[index...].firstIndex(of: 0) else { throw .truncated }
        defer { index = end + 1 }
        return String(decoding: bytes[index..<end], as: UTF8.self)
    }

    private mutating func unsigned(_ count: Int) throws(ReplicationDecodingError) -> UInt64 {
        try bytes(count).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }
}

/// A replication message that does not read as its kind says.
enum ReplicationDecodingError: Error, Equatable, CustomStringConvertible {
    /// The message ends before a field it must hold.
    case truncated
    /// A field holds a value the protocol does not define (what, as found).
    case unexpected(String)

    var description: String {
        switch self {
        case .truncated: "a replication message ended early"
        case .unexpected(let what): "a replication message holds \(what)"
        }
    }
}
