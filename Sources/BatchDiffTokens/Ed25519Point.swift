/// What a 32-byte Ed25519 point encoding is (RFC 8032 §5.1.3).
enum Ed25519PointKind: Equatable { case notCanonical, notOnCurve, smallOrder, mixedOrder, primeOrder }

/// Ed25519 points as a verifier checks them: a public key must be a canonical encoding of
/// a point of the prime-order group, and a signature's R must not be of small order (else
/// a key such as all zeros verifies forged tokens). Variable-time arithmetic: for public
/// data (keys, signatures) only.
enum Ed25519Point {
    /// Classifies a 32-byte encoding. notCanonical: y >= p, or x == 0 with the sign bit set (any other
    /// length is notCanonical too). notOnCurve: no x for that y. smallOrder: [8]P == identity (identity
    /// included). mixedOrder: not small order but [L]P != identity. primeOrder: [L]P == identity, P != identity.
    static func kind(of encoding: [UInt8]) -> Ed25519PointKind {
        switch decode(encoding, strict: true) {
        case .rejected(let kind): return kind
        case .point(let p):
            if p.timesEight.isIdentity { return .smallOrder }
            return p.multiplied(by: order).isIdentity ? .primeOrder : .mixedOrder
        }
    }

    /// Whether a (possibly non-canonical) encoding decodes to a point of small order, for a
    /// signature's R: y >= p is taken mod p and x == 0 with the sign bit set is taken, like
    /// libsodium's `ge25519_has_small_order`. The eight points of small order have five
    /// y-coordinates (each on the curve), so this compares y alone: no square root per
    /// signature. False for other lengths.
    static func hasSmallOrder(_ encoding: [UInt8]) -> Bool {
        guard encoding.count == 32 else { return false }
        var bytes = encoding
        bytes[31] &= 0x7f
        return smallOrderYs.contains(FieldElement(bytes: bytes).canonical)
    }

    /// The y-coordinates of the points of small order: the multiples of a point of order 8.
    private static let smallOrderYs: Set<SIMD4<UInt64>> = {
        let encoding: [UInt8] = [
            0xc7, 0x17, 0x6a, 0x70, 0x3d, 0x4d, 0xd8, 0x4f, 0xba, 0x3c, 0x0b, 0x76, 0x0d, 0x10, 0x67, 0x0f,
            0x2a, 0x20, 0x53, 0xfa, 0x2c, 0x39, 0xcc, 0xc6, 0x4e, 0xc7, 0xfd, 0x77, 0x92, 0xac, 0x03, 0x7a,
        ]
        guard case .point(let orderEight) = decode(encoding, strict: true) else { return [] }
        var multiples = [ExtendedPoint.identity]
        for _ in 1..<8 { multiples.append(multiples[multiples.count - 1].adding(orderEight)) }
        return Set(multiples.map { ($0.y * $0.z.inverse).canonical })
    }()

    /// The prime order L = 2^252 + 27742317777372353535851937790883648493 of the base point (little-endian limbs).
    static let order = SIMD4<UInt64>(0x5812_631a_5cf5_d3ed, 0x14de_f9de_a2f7_9cd6, 0, 0x1000_0000_0000_0000)

    /// Result of decoding: a point, or the reason it was refused (`.notCanonical` or `.notOnCurve`).
    enum Decoded { case point(ExtendedPoint), rejected(Ed25519PointKind) }

    /// Decodes per RFC 8032 §5.1.3. With `strict == false`, y >= p and "negative zero" x are tolerated.
    static func decode(_ encoding: [UInt8], strict: Bool) -> Decoded {
        guard encoding.count == 32 else { return .rejected(.notCanonical) }
        let sign = encoding[31] >> 7 == 1
        var bytes = encoding
        bytes[31] &= 0x7f
        let y = FieldElement(bytes: bytes)
        if strict && y.limbs != y.canonical { return .rejected(.notCanonical) }  // y >= p
        // x^2 = (y^2 - 1) / (d y^2 + 1); the denominator never vanishes since d is not a square.
        let y2 = y * y
        let w = (y2 - .one) * (ExtendedPoint.d * y2 + .one).inverse
        var x = w.power(FieldElement.sqrtExponent)
        if x * x != w {
            guard x * x == .zero - w else { return .rejected(.notOnCurve) }
            x = x * FieldElement.sqrtMinusOne
        }
        if strict && sign && x.isZero { return .rejected(.notCanonical) }
        if x.isOdd != sign { x = .zero - x }
        return .point(ExtendedPoint(x: x, y: y, z: .one, t: x * y))
    }

    /// A point of -x^2 + y^2 = 1 + d x^2 y^2 in extended coordinates: x = X/Z, y = Y/Z, x·y = T/Z.
    struct ExtendedPoint {
        var x, y, z, t: FieldElement

        typealias F = FieldElement
        static let identity = ExtendedPoint(x: .zero, y: .one, z: .one, t: .zero)
        /// d = -121665 / 121666.
        static let d = (F.zero - F(121_665)) * F(121_666).inverse
        private static let d2 = d + d

        /// Unified addition (RFC 8032 §5.1.4); complete on this curve.
        func adding(_ q: ExtendedPoint) -> ExtendedPoint {
            let a = (y - x) * (q.y - q.x), b = (y + x) * (q.y + q.x)
            let c = t * Self.d2 * q.t, dd = (z + z) * q.z
            let e = b - a, f = dd - c, g = dd + c, h = b + a
            return ExtendedPoint(x: e * f, y: g * h, z: f * g, t: e * h)
        }

        /// Doubling (RFC 8032 §5.1.4); complete on this curve.
        func doubled() -> ExtendedPoint {
            let a = x * x, b = y * y, c = (z * z) + (z * z)
            let h = a + b, s = x + y, e = h - s * s, g = a - b, f = c + g
            return ExtendedPoint(x: e * f, y: g * h, z: f * g, t: e * h)
        }

        /// [k]P by double-and-add over the 256 bits of `k` (little-endian limbs).
        func multiplied(by k: SIMD4<UInt64>) -> ExtendedPoint {
            var r = ExtendedPoint.identity
            for i in (0..<256).reversed() {
                r = r.doubled()
                if (k[i / 64] >> UInt64(i % 64)) & 1 == 1 { r = r.adding(self) }
            }
            return r
        }

        var timesEight: ExtendedPoint { doubled().doubled().doubled() }
        var isIdentity: Bool { x.isZero && y == z }

        /// The canonical 32-byte encoding (RFC 8032 §5.1.2).
        var encoded: [UInt8] {
            let zInverse = z.inverse
            var out = (y * zInverse).bytes
            if (x * zInverse).isOdd { out[31] |= 0x80 }
            return out
        }
    }
}
