import BatchDiffFeeds
import BatchDiffJSON

/// Verifies signed bearer tokens (RFC 7519 JWTs in compact JWS form) with the keys of a JWK
/// Set, and reads what they grant (docs/security.md): `exp` required, `nbf`, `aud` (checked
/// when an audience is set; a string or an array), `sub`, `feeds` and `scope`. No clock
/// leeway unless one is given.
public struct TokenVerifier: Sendable {
    public let keys: JSONWebKeySet
    public let audience: String?
    /// Seconds a token is still taken past its `exp`, and before its `nbf`: 0 to
    /// ``maxLeeway``.
    public let leeway: Double

    /// The longest leeway: a day. A clock that is off by more is not a leeway's business.
    public static let maxLeeway: Double = 86_400

    /// Token times (`exp`, `nbf`) are below this in magnitude: 2^53 seconds, where a
    /// `Double` still counts every second (and far past any real token's life).
    public static let timeLimit: Double = 9_007_199_254_740_992

    /// A verifier; `leeway` outside 0 to ``maxLeeway`` (or not a number) is taken as the
    /// nearest end of that range, so no token time plus leeway leaves the finite range.
    public init(keys: JSONWebKeySet, audience: String? = nil, leeway: Double = 0) {
        self.keys = keys
        self.audience = audience
        self.leeway = leeway.isNaN ? 0 : min(max(leeway, 0), Self.maxLeeway)
    }

    /// What `token` grants at `now` (seconds since 1970); ``TokenRefusal`` says why it is
    /// not valid.
    public func verify(_ token: String, now: Double) throws(TokenRefusal) -> TokenGrant {
        let bytes = Array(token.utf8)
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw TokenRefusal("not a signed token: three base64url parts joined by dots") }
        let header = try Self.object(parts[0], "header")
        guard let algorithm = header.member(named: "alg")?.string else { throw TokenRefusal("the header names no \"alg\"") }
        guard header.member(named: "crit") == nil else { throw TokenRefusal("the header has \"crit\" extensions this server does not know") }
        guard let kid = header.member(named: "kid")?.string else { throw TokenRefusal("the header names no \"kid\"") }
        // One detail for an unknown kid and an alg its key does not sign with: a caller
        // learns no kid of this server, nor what each signs with.
        guard let key = keys.keys[kid], algorithm == key.algorithm else { throw TokenRefusal("no key of this server verifies the header's kid with its alg") }
        guard let signature = Base64URL.decode(parts[2]), key.isValid(signature, of: Array(bytes[..<parts[1].endIndex])) else {
            throw TokenRefusal("the signature does not verify")
        }
        let claims = try Self.object(parts[1], "payload")
        guard let expiresAt = claims.member(named: "exp")?.double else { throw TokenRefusal("the token has no numeric \"exp\"") }
        guard Self.isTime(expiresAt) else { throw TokenRefusal("\"exp\" is not a time below 2^53 seconds") }
        guard now < expiresAt + leeway else { throw TokenRefusal("the token expired") }
        if let notBefore = claims.member(named: "nbf") {
            guard let notBefore = notBefore.double else { throw TokenRefusal("\"nbf\" is not a number") }
            guard Self.isTime(notBefore) else { throw TokenRefusal("\"nbf\" is not a time below 2^53 seconds") }
            guard now + leeway >= notBefore else { throw TokenRefusal("the token is not valid yet") }
        }
        if let audience {
            let audiences = claims.member(named: "aud").map { $0.isArray ? $0.elements.compactMap(\.string) : [$0.string].compactMap { $0 } } ?? []
            guard audiences.contains(where: { $0.utf8.elementsEqual(audience.utf8) }) else { throw TokenRefusal("the token is not for this audience") }
        }
        let subject = claims.member(named: "sub")
        guard subject == nil || subject?.string != nil else { throw TokenRefusal("\"sub\" is not a string") }
        var feeds: [FeedPattern] = []
        if let list = claims.member(named: "feeds") {
            guard list.isArray else { throw TokenRefusal("\"feeds\" is not an array of feed-id patterns") }
            for element in list.elements {
                // `{sub}` stands for the token's subject, so one pattern serves every user.
                if let written = element.string, written.contains("{sub}") {
                    guard let subject = subject?.string, !subject.isEmpty, subject.utf8.allSatisfy(FeedID.isNameByte) else {
                        throw TokenRefusal("\"feeds\" holds {sub}, and the token's \"sub\" is missing or holds a character feed ids do not (A-Z a-z 0-9 . _ -)")
                    }
                    guard let pattern = FeedPattern(written.replacing("{sub}", with: subject)) else {
                        throw TokenRefusal("\"feeds\" holds \(written.prefix(140)), not a feed id or a prefix of one ending in * once {sub} is the token's sub")
                    }
                    feeds.append(pattern)
                    continue
                }
                guard let pattern = element.string.flatMap(FeedPattern.init) else {
                    throw TokenRefusal("\"feeds\" holds \(String(decoding: element.text.prefix(140), as: UTF8.self)), not a feed id or a prefix of one ending in * (A-Z a-z 0-9 . _ -)")
                }
                feeds.append(pattern)
            }
        }
        var scopes: Set<Substring> = ["read"]
        if let scope = claims.member(named: "scope") {
            guard let text = scope.string else { throw TokenRefusal("\"scope\" is not a string") }
            scopes = Set(text.split(separator: " "))
        }
        return TokenGrant(
            subject: subject?.string, feeds: feeds, canRead: scopes.contains("read"), canWrite: scopes.contains("write"),
            expiresAt: expiresAt + leeway
        )
    }

    /// Whether `seconds` is a token time this verifier takes: finite and below
    /// ``timeLimit`` in magnitude (a JSON number can read as infinity, or as a value no
    /// integer type holds).
    private static func isTime(_ seconds: Double) -> Bool {
        seconds.isFinite && abs(seconds) < timeLimit
    }

    /// The JSON object a token's base64url `part` (its `name`) encodes.
    private static func object(_ part: ArraySlice<UInt8>, _ name: String) throws(TokenRefusal) -> JSONValue {
        guard let bytes = Base64URL.decode(part), let value = try? JSONDocument(bytes: bytes, refusingRepeatedMembers: true).root, value.isObject else {
            throw TokenRefusal("the \(name) is not a base64url JSON object")
        }
        return value
    }
}

/// Why a token is not valid (its holder gets 401 `invalid_token`).
public struct TokenRefusal: Error, CustomStringConvertible {
    public let description: String

    init(_ description: String) { self.description = description }
}
