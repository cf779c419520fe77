import Crypto
import Foundation
import XCTest

/// What tests of signed tokens share: three keys (HS256, EdDSA, ES256) in a JWK Set file
/// the server reads, and tokens signed with them here.
class SignedTokenTestCase: ServerTestCase {
    let secret = SymmetricKey(size: .bits256)
    let edKey = Curve25519.Signing.PrivateKey()
    let pKey = P256.Signing.PrivateKey()
    var now: Double { Date().timeIntervalSince1970 }

    func base64url(_ bytes: some DataProtocol) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    func json(_ object: [String: Any]) -> Data { try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) }

    /// The JWK Set of this test's three keys, or of `keys` alone.
    func keySet(_ keys: [[String: Any]]? = nil) -> Data {
        json(["keys": keys ?? [
            ["kty": "oct", "kid": "h1", "k": base64url(secret.withUnsafeBytes { Data($0) })],
            ["kty": "OKP", "crv": "Ed25519", "kid": "e1", "x": base64url(edKey.publicKey.rawRepresentation)],
            ["kty": "EC", "crv": "P-256", "kid": "p1", "x": base64url(pKey.publicKey.rawRepresentation.prefix(32)),
             "y": base64url(pKey.publicKey.rawRepresentation.suffix(32))],
        ]])
    }

    func keysFile(_ contents: Data) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("jwks-\(UUID().uuidString).json").path
        try contents.write(to: URL(fileURLWithPath: path))
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    /// A token of `claims` (`exp` an hour away unless given), signed as `alg` with key `kid`.
    func token(_ claims: [String: Any], alg: String = "HS256", kid: String = "h1", with signer: ((Data) -> Data)? = nil) -> String {
        var claims = claims
        if claims["exp"] == nil { claims["exp"] = now + 3600 }
        return token(payload: json(claims), alg: alg, kid: kid, with: signer)
    }

    /// A token whose payload is the JSON text `payload` as it is (numbers JSONSerialization
    /// cannot write, such as `1e999`), signed as `alg` with key `kid`.
    func token(payload: Data, alg: String = "HS256", kid: String = "h1", with signer: ((Data) -> Data)? = nil) -> String {
        let input = base64url(json(["alg": alg, "kid": kid, "typ": "JWT"])) + "." + base64url(payload)
        let data = Data(input.utf8)
        let signature: Data = signer?(data) ?? {
            switch alg {
            case "EdDSA": return try! edKey.signature(for: data)
            case "ES256": return lowS(try! pKey.signature(for: data).rawRepresentation)
            default: return Data(HMAC<SHA256>.authenticationCode(for: data, using: secret))
            }
        }()
        return input + "." + base64url(signature)
    }

    func bearer(_ token: String) -> [String: String] { ["Authorization": "Bearer \(token)"] }

    /// The order of P-256's group, big-endian.
    static let p256Order: [UInt8] = [
        0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xbc, 0xe6, 0xfa, 0xad, 0xa7, 0x17, 0x9e, 0x84, 0xf3, 0xb9, 0xca, 0xc2, 0xfc, 0x63, 0x25, 0x51,
    ]

    /// The ECDSA signature `r || s` with `s` replaced by `n - s` (both verify).
    func malleated(_ signature: Data) -> Data {
        var s = Array(signature.suffix(32))
        var borrow = 0
        for index in (0..<32).reversed() {
            let difference = Int(Self.p256Order[index]) - Int(s[index]) - borrow
            s[index] = UInt8((difference + 256) % 256)
            borrow = difference < 0 ? 1 : 0
        }
        return signature.prefix(32) + Data(s)
    }

    /// `signature` in its low-S form, the one the server takes (what a signer normalises).
    func lowS(_ signature: Data) -> Data {
        let s = Array(signature.suffix(32))
        let flipped = Array(malleated(signature).suffix(32))
        return flipped.lexicographicallyPrecedes(s) ? malleated(signature) : signature
    }
}
