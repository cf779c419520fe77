/// A filter of identity hashes, one bit each in a bitmap of at least eight bits an identity:
/// whether an identity may have been added (about one in twelve that was not says yes),
/// never a wrong no. It answers the common case of a lookup, absent, from 32 KB for 20,000
/// identities, where a table of them takes 256 KB and several probes.
@usableFromInline
struct IdentityFilter {
    @usableFromInline var words: [UInt64]
    @usableFromInline let shift: Int

    /// A filter for up to `count` identities.
    @inlinable
    init(capacityFor count: Int) {
        var bits = 6
        while (1 << bits) < 8 * count { bits += 1 }
        words = [UInt64](filling: 0, count: 1 << (bits - 6))
        shift = Int.bitWidth - bits
    }

    /// The bit of `hash`: its top bits after a multiply other than the table's.
    @inlinable @inline(__always)
    func bit(of hash: Int) -> Int {
        Int(truncatingIfNeeded: (UInt(bitPattern: hash) &* 0xD6E8_FEB8_6659_FD93) >> UInt(shift))
    }

    @inlinable @inline(__always)
    mutating func add(hash: Int) {
        let bit = bit(of: hash)
        words[bit >> 6] |= 1 << UInt64(bit & 63)
    }

    /// Whether an identity hashed to `hash` may have been added.
    @inlinable @inline(__always)
    func mayContain(hash: Int) -> Bool {
        let bit = bit(of: hash)
        return words[bit >> 6] & (1 << UInt64(bit & 63)) != 0
    }
}
