import Crypto

/// A key that verifies tokens, pinned to the one algorithm its type allows: an `oct` key
/// only HS256, an Ed25519 `OKP` key only EdDSA, a P-256 `EC` key only ES256. A token whose
/// header names another algorithm (`none` among them) is refused before its signature is
/// looked at.
public enum VerificationKey: Sendable {
    case hs256(SymmetricKey)
    case edDSA(Curve25519.Signing.PublicKey)
    case es256(P256.Signing.PublicKey)

    /// The `alg` a token signed with this key names.
    public var algorithm: String {
        switch self {
        case .hs256: "HS256"
        case .edDSA: "EdDSA"
        case .es256: "ES256"
        }
    }

    /// Whether `signature` signs `input` (a token's `header.payload`) with this key.
    func isValid(_ signature: [UInt8], of input: [UInt8]) -> Bool {
        switch self {
        case .hs256(let key):
            return HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: input, using: key)
        case .edDSA(let key):
            // R, the signature's first half, of small order is refused as libsodium does.
            return signature.count == 64 && !Ed25519Point.hasSmallOrder(Array(signature[..<32])) && key.isValidSignature(signature, for: input)
        case .es256(let key):
            // JWS writes an ECDSA signature as r and s, 32 bytes each (RFC 7518 §3.4). Only
            // the low-S form is taken: (r, n - s) verifies too, and would be another token
            // string for the same claims.
            guard signature.count == 64, Self.isLowS(signature[32...]),
                  let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
            return key.isValidSignature(signature, for: input)
        }
    }

    /// Half the order of P-256's group, big-endian: an ECDSA `s` at most this is low.
    private static let halfOrderOfP256: [UInt8] = [
        0x7f, 0xff, 0xff, 0xff, 0x80, 0x00, 0x00, 0x00, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xde, 0x73, 0x7d, 0x56, 0xd3, 0x8b, 0xcf, 0x42, 0x79, 0xdc, 0xe5, 0x61, 0x7e, 0x31, 0x92, 0xa8,
    ]

    /// Whether the 32-byte big-endian `s` is at most half the group's order.
    private static func isLowS(_ s: ArraySlice<UInt8>) -> Bool {
        !halfOrderOfP256.lexicographicallyPrecedes(s)
    }
}
