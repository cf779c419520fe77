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
            return key.isValidSignature(signature, for: input)
        case .es256(let key):
            // JWS writes an ECDSA signature as r and s, 32 bytes each (RFC 7518 §3.4).
            guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
            return key.isValidSignature(signature, for: input)
        }
    }
}
