import Synchronization

/// The token verifier in force: its keys are read again when the operator says so
/// (`SIGHUP`), and a set that fails to read leaves the keys in force.
public final class TokenKeyring: Sendable {
    private let verifier: Mutex<TokenVerifier>
    private let audience: String?
    private let leeway: Double

    /// A keyring of the JWK Set written as `json`, checking `audience` when given and
    /// taking tokens `leeway` seconds past their times.
    public init(json: [UInt8], audience: String?, leeway: Double) throws(TokenKeyError) {
        self.audience = audience
        self.leeway = leeway
        verifier = Mutex(TokenVerifier(keys: try JSONWebKeySet(json: json), audience: audience, leeway: leeway))
    }

    /// Puts the keys of the JWK Set written as `json` in force; when it does not read,
    /// throws and keeps the keys in force.
    public func reload(json: [UInt8]) throws(TokenKeyError) {
        let keys = try JSONWebKeySet(json: json)
        verifier.withLock { $0 = TokenVerifier(keys: keys, audience: audience, leeway: leeway) }
    }

    /// The verifier in force now.
    public var current: TokenVerifier { verifier.withLock { $0 } }
}
