/// A message of the copy-both stream a `START_REPLICATION` opens (the documentation's
/// "Streaming Replication Protocol"): WAL data, or the server's keepalive. Positions are
/// LSNs; times are microseconds since 2000-01-01, PostgreSQL's epoch.
enum ReplicationFrame: Equatable, Sendable {
    /// XLogData: WAL from `start`, with the server's WAL end when it sent it, and the
    /// decoded change (a ``PgOutputMessage``'s bytes).
    case data(start: UInt64, serverEnd: UInt64, sendTime: Int64, payload: ArraySlice<UInt8>)
    /// Primary keepalive: the server's WAL end, and whether it asks for a status update now.
    case keepalive(serverEnd: UInt64, sendTime: Int64, replyRequested: Bool)

    init(decoding bytes: [UInt8]) throws(ReplicationDecodingError) {
        var reader = ByteReader(bytes[...])
        switch try reader.byte() {
        case UInt8(ascii: "w"):
            let start = try reader.uint64()
            let end = try reader.uint64()
            let time = try reader.int64()
            self = .data(start: start, serverEnd: end, sendTime: time, payload: reader.rest)
        case UInt8(ascii: "k"):
            let end = try reader.uint64()
            let time = try reader.int64()
            self = .keepalive(serverEnd: end, sendTime: time, replyRequested: try reader.byte() == 1)
        case let other:
            throw .unexpected("a stream message of kind \(other)")
        }
    }

    /// A standby status update: everything up to `flushed` is applied and stored (the slot
    /// may move past it), at `now` (microseconds since 2000-01-01).
    static func statusUpdate(flushed: UInt64, now: Int64) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "r")]
        for position in [flushed, flushed, flushed, UInt64(bitPattern: now)] {
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: position >> UInt64(shift))) }
        }
        bytes.append(0)  // no reply asked for
        return bytes
    }

    /// Microseconds from 1970-01-01 to PostgreSQL's epoch, 2000-01-01.
    static let epochOffset: Int64 = 946_684_800_000_000
}

/// A WAL position as PostgreSQL writes it: `16/B374D848`.
struct LogPosition: Comparable, Hashable, Sendable, CustomStringConvertible {
    var value: UInt64

    init(_ value: UInt64) { self.value = value }

    /// The position `text` writes, or `nil`.
    init?(_ text: String) {
        let halves = text.split(separator: "/")
        guard halves.count == 2, let high = UInt64(halves[0], radix: 16), let low = UInt64(halves[1], radix: 16),
              high <= UInt32.max, low <= UInt32.max else { return nil }
        value = high << 32 | low
    }

    var description: String { String(value >> 32, radix: 16, uppercase: true) + "/" + String(value & 0xFFFF_FFFF, radix: 16, uppercase: true) }

    static func < (left: LogPosition, right: LogPosition) -> Bool { left.value < right.value }
}
