/// Numbers as LEB128 varints, as the encodings a store keeps write them (``TextDelta``,
/// a version's batch).
enum Varint {
    /// Appends `value` (not negative) to `bytes`.
    static func append(_ value: Int, to bytes: inout [UInt8]) {
        var value = UInt64(value)
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }
}

/// Reads bytes and varints from the front of encoded bytes, throwing what `failure` makes
/// of the reason when they are cut short or hold a number too long.
struct VarintReader<Failure: Error> {
    let bytes: [UInt8]
    private(set) var offset = 0
    private let failure: (String) -> Failure

    init(bytes: [UInt8], failure: @escaping (String) -> Failure) {
        self.bytes = bytes
        self.failure = failure
    }

    /// Whether every byte was read.
    var isAtEnd: Bool { offset == bytes.count }

    mutating func byte() throws(Failure) -> UInt8 {
        guard offset < bytes.count else { throw failure("cut short") }
        offset += 1
        return bytes[offset - 1]
    }

    mutating func varint() throws(Failure) -> Int {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 63, by: 7) {
            let byte = try byte()
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return Int(clamping: value) }
        }
        throw failure("holding a number too long")
    }
}
