import CZlib

/// gzip (RFC 1952) over zlib: the one place the server touches zlib and its pointers.
///
/// Each stream's `z_stream` is allocated on its own, never inside a movable value (zlib
/// keeps its address), and is ended exactly once, when its owner goes.
public enum Gzip {
    /// `bytes` as one gzip member, at zlib's fastest level (JSON still shrinks to a
    /// fraction of its size).
    public static func compress(_ bytes: [UInt8]) -> [UInt8] {
        let stream = ZStream()
        precondition(batchdiff_deflate_init_gzip(stream.pointer, Z_BEST_SPEED) == Z_OK, "deflateInit2 failed: out of memory")
        defer { deflateEnd(stream.pointer) }
        // A gzip member's header and trailer add 18 bytes to deflate's bound.
        let bound = Int(deflateBound(stream.pointer, uLong(bytes.count))) + 18
        var output = [UInt8](repeating: 0, count: bound)
        let written = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out -> Int in
                stream.pointer.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.pointer.pointee.avail_in = uInt(input.count)
                stream.pointer.pointee.next_out = out.baseAddress
                stream.pointer.pointee.avail_out = uInt(out.count)
                defer {
                    stream.pointer.pointee.next_in = nil
                    stream.pointer.pointee.next_out = nil
                }
                let status = deflate(stream.pointer, Z_FINISH)
                precondition(status == Z_STREAM_END, "deflate into its bound did not finish: \(status)")
                return out.count - Int(stream.pointer.pointee.avail_out)
            }
        }
        // A copy of its own size: the bound's room would otherwise stay allocated with it.
        return Array(output[..<written])
    }
}

extension Gzip {
    /// zlib's CRC-32 of `bytes` in the high half and its Adler-32 in the low: a checksum
    /// that is the same in every process (unlike the seeded fingerprints), to tell two
    /// texts apart where a store keeps it. Not a defence against a chosen collision.
    public static func checksum(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBufferPointer { buffer in
            let crc = crc32(0, buffer.baseAddress, uInt(buffer.count))
            let adler = adler32(1, buffer.baseAddress, uInt(buffer.count))
            return UInt64(crc) << 32 | UInt64(adler)
        }
    }
}

/// Inflates a gzip body piece by piece as it arrives, within a limit on the inflated
/// size (a zip bomb stops at the limit). Concatenated members are read one after another.
public final class GzipInflater {
    private let stream = ZStream()
    /// Whether the input so far ends at the end of a member.
    public private(set) var isAtEnd = false

    public init() {
        precondition(batchdiff_inflate_init_gzip(stream.pointer) == Z_OK, "inflateInit2 failed: out of memory")
    }

    deinit { inflateEnd(stream.pointer) }

    /// Inflates `input` onto the end of `output`, which may grow to `limit` bytes at most;
    /// before each piece is added, `room(size)` is asked whether `output` may grow to `size`
    /// bytes (a caller that counts memory reserves it there), and a no stops the inflating.
    public func inflate(
        _ input: UnsafeRawBufferPointer, into output: inout [UInt8], limit: Int, room: (Int) -> Bool = { _ in true }
    ) throws(GzipError) {
        guard !input.isEmpty else { return }
        stream.pointer.pointee.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
        stream.pointer.pointee.avail_in = uInt(input.count)
        defer { stream.pointer.pointee.next_in = nil }
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        var produced = 0
        // Until the input is used up and zlib holds no more output (a chunk filled up may
        // leave some inside it).
        while stream.pointer.pointee.avail_in > 0 || produced == chunk.count {
            if isAtEnd {
                // Another member follows.
                inflateReset(stream.pointer)
                isAtEnd = false
            }
            let status: Int32
            (status, produced) = chunk.withUnsafeMutableBufferPointer { out -> (Int32, Int) in
                stream.pointer.pointee.next_out = out.baseAddress
                stream.pointer.pointee.avail_out = uInt(out.count)
                defer { stream.pointer.pointee.next_out = nil }
                let status = CZlib.inflate(stream.pointer, Z_NO_FLUSH)
                return (status, out.count - Int(stream.pointer.pointee.avail_out))
            }
            guard output.count + produced <= limit else { throw .tooLarge }
            guard produced == 0 || room(output.count + produced) else { throw .noRoom }
            output.append(contentsOf: chunk[..<produced])
            switch status {
            case Z_STREAM_END:
                isAtEnd = true
                if stream.pointer.pointee.avail_in == 0 { return }
            case Z_OK: continue
            case Z_BUF_ERROR where produced > 0 || stream.pointer.pointee.avail_in == 0: continue  // no progress: more input needed
            default: throw .corrupt(message(status))
            }
        }
    }

    private func message(_ status: Int32) -> String {
        stream.pointer.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"
    }
}

/// Why a gzip body cannot be read.
public enum GzipError: Error, Equatable, Sendable {
    /// The inflated body passed the limit.
    case tooLarge
    /// The caller had no room for more of the inflated body.
    case noRoom
    /// Not gzip, or damaged.
    case corrupt(String)
}

/// A `z_stream` at an address of its own, freed with its owner.
private final class ZStream {
    let pointer = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)

    init() { pointer.initialize(to: z_stream()) }

    deinit {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }
}
