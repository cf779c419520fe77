extension Ed25519Point {
    /// An element of GF(p), p = 2^255 - 19, as four little-endian 64-bit limbs. Limbs may hold any value
    /// below 2^256 (a representative mod p); `canonical` gives the unique one below p.
    struct FieldElement: Equatable {
        var limbs: SIMD4<UInt64>

        init(_ limbs: SIMD4<UInt64>) { self.limbs = limbs }
        init(_ small: UInt64) { limbs = SIMD4(small, 0, 0, 0) }
        /// 32 little-endian bytes (all 256 bits are used; the caller masks the sign bit).
        init(bytes: [UInt8]) {
            limbs = SIMD4()
            for i in 0..<min(bytes.count, 32) { limbs[i / 8] |= UInt64(bytes[i]) << (8 * UInt64(i % 8)) }
        }

        static let zero = FieldElement(0), one = FieldElement(1)
        private static let low255: UInt64 = 0x7fff_ffff_ffff_ffff
        /// p - 2 (Fermat inverse), (p + 3) / 8 (square root candidate), (p - 1) / 4.
        static let inverseExponent = SIMD4<UInt64>(0xffff_ffff_ffff_ffeb, .max, .max, low255)
        static let sqrtExponent = SIMD4<UInt64>(0xffff_ffff_ffff_fffe, .max, .max, 0x0fff_ffff_ffff_ffff)
        /// sqrt(-1) = 2^((p-1)/4), as 2 is a non-residue (p ≡ 5 mod 8).
        static let sqrtMinusOne = FieldElement(2).power(SIMD4(0xffff_ffff_ffff_fffb, .max, .max, 0x1fff_ffff_ffff_ffff))

        /// Returns x·y + t + c split into (high, low); it cannot overflow 128 bits.
        private static func mac(_ x: UInt64, _ y: UInt64, _ t: UInt64, _ c: UInt64) -> (UInt64, UInt64) {
            let (hi, lo) = x.multipliedFullWidth(by: y)
            let (s1, o1) = lo.addingReportingOverflow(t)
            let (s2, o2) = s1.addingReportingOverflow(c)
            return (hi &+ (o1 ? 1 : 0) &+ (o2 ? 1 : 0), s2)
        }

        /// Adds `k` to a 256-bit value, folding each overflow past 2^256 back in as 38 (2^256 ≡ 38 mod p).
        private static func fold(_ value: SIMD4<UInt64>, adding k: UInt64) -> SIMD4<UInt64> {
            var r = value, add = k
            while add != 0 {
                var carry = add
                for i in 0..<4 {
                    let (s, o) = r[i].addingReportingOverflow(carry)
                    r[i] = s
                    carry = o ? 1 : 0
                }
                add = carry * 38
            }
            return r
        }

        static func + (a: Self, b: Self) -> Self {
            var r = a.limbs, carry: UInt64 = 0
            for i in 0..<4 { (carry, r[i]) = mac(a.limbs[i], 1, b.limbs[i], carry) }
            return Self(fold(r, adding: carry * 38))
        }

        static func - (a: Self, b: Self) -> Self {
            var r = a.limbs, borrow: UInt64 = 0
            for i in 0..<4 {
                let (d1, o1) = r[i].subtractingReportingOverflow(b.limbs[i])
                let (d2, o2) = d1.subtractingReportingOverflow(borrow)
                r[i] = d2
                borrow = (o1 || o2) ? 1 : 0
            }
            // A borrow left r = a - b + 2^256 ≡ a - b + 38: take 38 off (once more if that borrows too).
            var sub = borrow * 38
            while sub != 0 {
                for i in 0..<4 {
                    let (d, o) = r[i].subtractingReportingOverflow(sub)
                    r[i] = d
                    sub = o ? 1 : 0
                }
                sub *= 38
            }
            return Self(r)
        }

        static func * (a: Self, b: Self) -> Self {
            var t = SIMD8<UInt64>()
            for i in 0..<4 {
                var carry: UInt64 = 0
                for j in 0..<4 { (carry, t[i + j]) = mac(a.limbs[i], b.limbs[j], t[i + j], carry) }
                t[i + 4] = carry
            }
            // t = low + 2^256·high ≡ low + 38·high.
            var r = t.lowHalf, carry: UInt64 = 0
            for i in 0..<4 { (carry, r[i]) = mac(t[i + 4], 38, r[i], carry) }
            return Self(fold(r, adding: carry * 38))
        }

        /// self^e by square-and-multiply over the 256 bits of `e`.
        func power(_ e: SIMD4<UInt64>) -> Self {
            var r = Self.one
            for i in (0..<256).reversed() {
                r = r * r
                if (e[i / 64] >> UInt64(i % 64)) & 1 == 1 { r = r * self }
            }
            return r
        }

        var inverse: Self { power(Self.inverseExponent) }

        /// The unique representative below p.
        var canonical: SIMD4<UInt64> {
            // Fold bit 255 (2^255 ≡ 19): the value is then below 2^255 + 19 < 2p.
            var r = limbs
            r[3] &= Self.low255
            r = Self.fold(r, adding: (limbs[3] >> 63) * 19)
            // r >= p exactly when r + 19 reaches 2^255; then r - p is r + 19 without bit 255.
            var s = Self.fold(r, adding: 19)
            if s[3] >> 63 == 1 { s[3] &= Self.low255; r = s }
            return r
        }

        var isZero: Bool { canonical == SIMD4() }
        var isOdd: Bool { canonical[0] & 1 == 1 }
        var bytes: [UInt8] {
            let c = canonical
            return (0..<32).map { UInt8(truncatingIfNeeded: c[$0 / 8] >> (8 * UInt64($0 % 8))) }
        }
        static func == (a: Self, b: Self) -> Bool { a.canonical == b.canonical }
    }
}
