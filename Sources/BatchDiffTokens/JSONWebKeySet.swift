import BatchDiffJSON
import Crypto

/// The keys of a JSON Web Key Set (RFC 7517), by `kid`: HS256 `oct` keys (at least 32
/// bytes), Ed25519 `OKP` keys and P-256 `EC` keys, each public key alone (no private part
/// is needed or kept). Anything else in the set (another key type or curve, a key without
/// a `kid`, a `kid` twice, an `alg` that is not the one its type allows, a `use` other than
/// `sig`, an Ed25519 `x` that is not a point of the prime-order group) is refused, naming the key: a set that half loads would leave tokens failing in
/// ways nobody sees.
public struct JSONWebKeySet: Sendable {
    /// The keys, by `kid`.
    public let keys: [String: VerificationKey]

    /// The set written as JSON `text`; ``TokenKeyError`` says what is wrong with it.
    public init(json text: [UInt8]) throws(TokenKeyError) {
        let root: JSONValue
        do {
            root = try JSONDocument(bytes: text, refusingRepeatedMembers: true).root
        } catch {
            throw TokenKeyError("the JWK Set is not JSON: \(error)")
        }
        guard let list = root.member(named: "keys"), list.isArray else { throw TokenKeyError("a JWK Set is {\"keys\": [...]}") }
        var keys: [String: VerificationKey] = [:]
        for (index, key) in list.elements.enumerated() {
            guard let kid = key.member(named: "kid")?.string, !kid.isEmpty else { throw TokenKeyError("key \(index) has no \"kid\"") }
            guard keys[kid] == nil else { throw TokenKeyError("the kid \(kid.debugDescription) names two keys") }
            let parsed = try Self.key(key, named: kid)
            if let use = key.member(named: "use") { guard use.string == "sig" else { throw TokenKeyError("key \(kid.debugDescription): \"use\" is not \"sig\"") } }
            if let alg = key.member(named: "alg") {
                guard alg.string == parsed.algorithm else {
                    throw TokenKeyError("key \(kid.debugDescription) is for \(parsed.algorithm); its \"alg\" says \(String(decoding: alg.text, as: UTF8.self))")
                }
            }
            keys[kid] = parsed
        }
        self.keys = keys
    }

    private static func key(_ key: JSONValue, named kid: String) throws(TokenKeyError) -> VerificationKey {
        func bytes(_ member: String) throws(TokenKeyError) -> [UInt8] {
            guard let text = key.member(named: member)?.string, let bytes = Base64URL.decode(Array(text.utf8)) else {
                throw TokenKeyError("key \(kid.debugDescription) has no base64url \"\(member)\"")
            }
            return bytes
        }
        let type = key.member(named: "kty")?.string
        let curve = key.member(named: "crv")?.string
        switch (type, curve) {
        case ("oct", _):
            let secret = try bytes("k")
            guard secret.count >= 32 else { throw TokenKeyError("key \(kid.debugDescription): an HS256 secret has at least 32 bytes, this one \(secret.count)") }
            return .hs256(SymmetricKey(data: secret))
        case ("OKP", "Ed25519"):
            let x = try bytes("x")
            // A placeholder (all zeros), the identity or any point of small order verifies
            // forged signatures: only a canonical point of the prime-order group is a key.
            guard Ed25519Point.kind(of: x) == .primeOrder, let publicKey = try? Curve25519.Signing.PublicKey(rawRepresentation: x) else {
                throw TokenKeyError("key \(kid.debugDescription): \"x\" is not an Ed25519 public key (a canonical point of the prime-order group)")
            }
            return .edDSA(publicKey)
        case ("EC", "P-256"):
            guard let publicKey = try? P256.Signing.PublicKey(rawRepresentation: try bytes("x") + bytes("y")) else {
                throw TokenKeyError("key \(kid.debugDescription): \"x\" and \"y\" are not a P-256 point")
            }
            return .es256(publicKey)
        default:
            throw TokenKeyError("key \(kid.debugDescription): kty \(type ?? "(none)") crv \(curve ?? "(none)") is not one of oct, OKP Ed25519, EC P-256")
        }
    }
}

/// What is wrong with a JWK Set.
public struct TokenKeyError: Error, CustomStringConvertible {
    public let description: String

    init(_ description: String) { self.description = description }
}
