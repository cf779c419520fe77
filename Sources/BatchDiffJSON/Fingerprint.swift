/// A 128-bit fingerprint of a JSON value's canonical form (or of an identity).
///
/// 128 bits make an accidental collision between two different values of one request
/// vanishingly unlikely (about 2^-64 for a billion values), so fingerprints stand for the
/// values they were made from. The hash is seeded per process, so inputs cannot be
/// crafted offline to collide.
public struct Fingerprint: Hashable, Sendable {
    public var high: UInt64
    public var low: UInt64

    @inlinable
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    @inlinable
    public static func == (lhs: Fingerprint, rhs: Fingerprint) -> Bool {
        lhs.low == rhs.low && lhs.high == rhs.high
    }

    @inlinable
    public func hash(into hasher: inout Hasher) {
        hasher.combine(low)
    }
}

/// Streams 64-bit words and bytes into a ``Fingerprint``: two multiply-mix lanes with
/// different constants (the folded 128-bit product of wyhash).
struct FingerprintHasher {
    private static let seed: (UInt64, UInt64) = {
        var generator = SystemRandomNumberGenerator()
        return (generator.next(), generator.next())
    }()

    private var first: UInt64
    private var second: UInt64

    /// A hasher for a value of kind `tag`.
    init(tag: UInt64) {
        first = Self.seed.0 ^ tag
        second = Self.seed.1 ^ (tag &* 0x9E37_79B9_7F4A_7C15)
    }

    @inline(__always)
    private static func mix(_ x: UInt64, _ y: UInt64) -> UInt64 {
        let product = x.multipliedFullWidth(by: y)
        return product.high ^ product.low
    }

    @inline(__always)
    mutating func combine(_ word: UInt64) {
        first = Self.mix(first ^ word, 0xA076_1D64_78BD_642F)
        second = Self.mix(second ^ word ^ 0xE703_7ED1_A0B4_28DB, 0x8EBC_6AF0_9C88_C6E3)
    }

    mutating func combine(_ fingerprint: Fingerprint) {
        combine(fingerprint.high)
        combine(fingerprint.low)
    }

    /// Hashes `bytes` sixteen at a time (each lane takes both words, as wyhash does), after
    /// their length, so inputs of different lengths never share a padded tail.
    mutating func combine(bytes: UnsafeRawBufferPointer) {
        let count = bytes.count
        first ^= UInt64(count) &* 0x9E37_79B9_7F4A_7C15
        var offset = 0
        while offset + 16 <= count {
            let word0 = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            let word1 = bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)
            first = Self.mix(first ^ word0, 0xA076_1D64_78BD_642F ^ word1)
            second = Self.mix(second ^ word1, 0x8EBC_6AF0_9C88_C6E3 ^ word0)
            offset += 16
        }
        if count - offset > 8 {
            combine(bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            offset += 8
        }
        if offset < count {
            // The last (up to) eight bytes; reading them overlapped with the ones before is
            // fine, since the length is already in the hash.
            if count >= 8 {
                combine(bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self))
            } else {
                var tail: UInt64 = 0
                for index in offset..<count { tail = tail << 8 | UInt64(bytes[index]) }
                combine(tail)
            }
        }
    }

    func finalize() -> Fingerprint {
        Fingerprint(high: Self.mix(first, 0x5899_65CC_7537_4CC3) ^ second, low: Self.mix(second, 0x1D8E_4E27_C47D_124F) ^ first)
    }
}

/// Kinds of JSON value, as hashed: values of different kinds never share a fingerprint.
enum ValueKind: UInt8 {
    case null, `false`, `true`, number, string, array, object

    /// Whether an identity member of this kind is an identity (docs/batch-format.md §1.2: a
    /// string or a number); an item whose member is anything else is its own identity.
    var canBeIdentity: Bool { self == .string || self == .number }
}

/// The fingerprint of a JSON array, its elements' fingerprints added in order: what the
/// parser makes of an array.
struct ArrayFingerprint {
    private var hasher = FingerprintHasher(tag: UInt64(ValueKind.array.rawValue))
    private var count = 0

    /// An array with no elements yet.
    init() {}

    /// Adds the next element's fingerprint.
    mutating func add(_ element: Fingerprint) {
        hasher.combine(element)
        count += 1
    }

    /// The array's fingerprint.
    func finalize() -> Fingerprint {
        var hasher = hasher
        hasher.combine(UInt64(count))
        return hasher.finalize()
    }
}

extension Fingerprint {
    /// The fingerprint of the JSON string whose decoded UTF-8 is `bytes`.
    public static func string(_ bytes: UnsafeRawBufferPointer) -> Fingerprint {
        var hasher = FingerprintHasher(tag: UInt64(ValueKind.string.rawValue))
        hasher.combine(bytes: bytes)
        return hasher.finalize()
    }

    /// The fingerprint of the JSON string `text` (the same as the string's in a document).
    public static func string(_ text: String) -> Fingerprint {
        var text = text
        return text.withUTF8 { string(UnsafeRawBufferPointer($0)) }
    }

    /// The fingerprint of an object member, combined order-independently into the object's.
    static func member(key: Fingerprint, value: Fingerprint) -> Fingerprint {
        var hasher = FingerprintHasher(tag: 0x6D65_6D62)
        hasher.combine(key)
        hasher.combine(value)
        return hasher.finalize()
    }

    /// The fingerprint of an object from the wrapping sum of its members' fingerprints.
    static func object(memberSum: Fingerprint, count: Int) -> Fingerprint {
        var hasher = FingerprintHasher(tag: UInt64(ValueKind.object.rawValue))
        hasher.combine(memberSum)
        hasher.combine(UInt64(count))
        return hasher.finalize()
    }

    static func &+ (lhs: Fingerprint, rhs: Fingerprint) -> Fingerprint {
        Fingerprint(high: lhs.high &+ rhs.high, low: lhs.low &+ rhs.low)
    }
}
