/// The hash of a `String` identity, the usual kind (UUIDs, slugs, keys): a seeded
/// multiply-mix hash over its UTF-8 (the folded 128-bit product of wyhash), several times
/// faster than the standard library's SipHash, which was most of the time the differ spent
/// on 100,000 UUID strings.
///
/// It keeps the promise `hashValue` keeps: strings that are equal (`==`, by canonical
/// equivalence) hash alike. An ASCII string is hashed by its bytes. Three non-ASCII scalars
/// are canonically equivalent to ASCII ones (U+037E to `;`, U+1FEF to `` ` ``, U+212A to
/// `K`: no other scalar's canonical decomposition is all ASCII), so a string of ASCII and
/// those is hashed as the ASCII string it equals. Any other string equals no ASCII string,
/// and takes its `hashValue`.
///
/// What it guarantees against chosen identities: two 64-bit seeds are drawn per process,
/// one in the running state and one in the other operand of every multiply (as wyhash
/// puts its seed in both), so no operand can be made zero, or all ones, without knowing
/// them, and collisions cannot be crafted offline. It is not a keyed MAC: a client who
/// learns hashes (timing, say) over many requests may still find collisions, which cost
/// the differ time, never a wrong batch (identities are compared after the hash).
@usableFromInline
enum StringIdentityHash {
    static let seeds: (UInt64, UInt64) = {
        var generator = SystemRandomNumberGenerator()
        return (generator.next(), generator.next())
    }()

    /// ``seeds``, through a call known to release nothing: a string borrowed across it (a
    /// row's identity read where the row lies) need not be retained for it.
    @usableFromInline @_effects(releasenone)
    static func processSeeds() -> (UInt64, UInt64) { seeds }

    /// The hash of `string`.
    @inlinable @inline(__always)
    static func hash(_ string: String) -> Int {
        if let hashed = string.utf8.withContiguousStorageIfAvailable({ hash(ascii: UnsafeRawBufferPointer($0)) }),
           let hash = hashed {
            return hash
        }
        if let ascii = asciiEquivalent(of: string) { return ascii.withUnsafeBytes { hash(ascii: $0)! } }
        return string.hashValue
    }

    /// The hash of `bytes`, or nil when one of them is not ASCII.
    @inlinable @inline(__always)
    static func hash(ascii bytes: UnsafeRawBufferPointer) -> Int? {
        let count = bytes.count
        let (seed, operandSeed) = processSeeds()
        var state = seed ^ (UInt64(count) &* 0x9E37_79B9_7F4A_7C15)
        var highBits: UInt64 = 0
        var offset = 0
        while offset + 16 <= count {
            let word0 = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            let word1 = bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)
            highBits |= word0 | word1
            state = mix(state ^ word0, operandSeed ^ word1)
            offset += 16
        }
        if count - offset > 8 {
            let word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            highBits |= word
            state = mix(state ^ word, operandSeed ^ 0xE703_7ED1_A0B4_28DB)
            offset += 8
        }
        if offset < count {
            // The last (up to) eight bytes, overlapping the ones before when there are
            // enough: the length is already in the state.
            var tail: UInt64 = 0
            if count >= 8 {
                tail = bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            } else {
                for index in offset..<count { tail = tail << 8 | UInt64(bytes[index]) }
            }
            highBits |= tail
            state = mix(state ^ tail, operandSeed ^ 0x8EBC_6AF0_9C88_C6E3)
        }
        guard highBits & 0x8080_8080_8080_8080 == 0 else { return nil }
        return Int(truncatingIfNeeded: mix(state, operandSeed ^ 0x5899_65CC_7537_4CC3))
    }

    /// The ASCII bytes of the ASCII string `string` equals, if it equals one.
    @usableFromInline
    static func asciiEquivalent(of string: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        for scalar in string.unicodeScalars {
            switch scalar.value {
            case ..<0x80: bytes.append(UInt8(scalar.value))
            case 0x037E: bytes.append(UInt8(ascii: ";"))
            case 0x1FEF: bytes.append(UInt8(ascii: "`"))
            case 0x212A: bytes.append(UInt8(ascii: "K"))
            default: return nil
            }
        }
        return bytes
    }

    @inlinable @inline(__always)
    static func mix(_ x: UInt64, _ y: UInt64) -> UInt64 {
        let product = x.multipliedFullWidth(by: y)
        return product.high ^ product.low
    }
}

extension Diffable where Identity == String {
    /// String identities equal to ASCII strings are hashed by their bytes, seeded per
    /// process, several times faster; others by `hashValue`. Equal strings hash alike.
    @inlinable @inline(__always) public var identityHash: Int { StringIdentityHash.hash(identity) }
}
