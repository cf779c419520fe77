import BatchDiffTokens
import HTTPServer
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

extension BatchDiffService {
    /// Decides whether `request` may have `access` to feed `feed` (`nil`: not one feed's
    /// route), docs/security.md. A static token (`--read-token`, `--write-token`) lets it do
    /// everything its kind allows: `nil`. A signed token (`--jwt-keys`) must verify (else 401
    /// `invalid_token`), have the scope (read or write) and name the feed (else 403
    /// `insufficient_scope`): its grant. Reads need a credential when a read token or keys
    /// are configured, writes when any token or keys are (else the request goes on, whatever
    /// credential it has); without one, 401. A credential that is neither a configured token
    /// nor a signed one is 403. The credentials it let the request in by are the answer. A
    /// read of a public feed (`--public-feeds`) is let in whatever credential it has, or
    /// none (one that holds still names its client).
    func authorize(_ request: HTTPRequest, _ access: Endpoint.Access, feed: String?) throws(Problem) -> Credentials {
        guard access == .read, let feed, configuration.isPublic(feed) else { return try authorizeByCredential(request, access, feed: feed) }
        var credentials = (try? authorizeByCredential(request, access, feed: feed)) ?? Credentials()
        credentials.readsPublicFeed = true
        return credentials
    }

    /// ``authorize(_:_:feed:)`` by the request's credential alone.
    private func authorizeByCredential(_ request: HTTPRequest, _ access: Endpoint.Access, feed: String?) throws(Problem) -> Credentials {
        let keyring = configuration.tokenKeys
        let isWrite = access == .write
        let needed = keyring != nil || (isWrite ? configuration.writeToken ?? configuration.readToken : configuration.readToken) != nil
        // A request that needs no credential is not judged by the one it has (a proxy's
        // `Authorization: Basic` included).
        guard needed else { return Credentials() }
        guard let (credential, fromQuery) = try Self.credential(of: request, forWriting: isWrite) else { throw Problem.unauthorized }
        // The write token is never taken from a URL, where histories and proxies keep it.
        let tokens = isWrite ? [configuration.writeToken ?? configuration.readToken] : [configuration.readToken, fromQuery ? nil : configuration.writeToken]
        let configured = tokens.compactMap { $0 }
        if configured.map({ constantTimeEqual(credential, Array($0.utf8)) }).contains(true) { return Credentials(token: credential) }
        guard let keyring, credential.contains(UInt8(ascii: ".")) else { throw Problem.forbidden }
        let grant: TokenGrant
        do {
            grant = try keyring.current.verify(String(decoding: credential, as: UTF8.self), now: feeds.clock.secondsSince1970())
        } catch {
            throw Problem.invalidToken(error.description)
        }
        guard isWrite ? grant.canWrite : grant.canRead else {
            throw Problem.insufficientScope("the token's scope does not allow \(isWrite ? "writes" : "reads")")
        }
        if let feed, !grant.covers(feed) { throw Problem.insufficientScope("the token does not name feed \(feed)") }
        return Credentials(grant: grant, token: credential)
    }

    /// The bearer credential of `request`: `Authorization: Bearer <token>`, or for a read by
    /// `GET` without that header, the `access_token` query parameter (RFC 6750 §2.3: a
    /// browser's `EventSource` cannot send headers), never logged as no query is; and
    /// whether it came from the query. 401 for an `Authorization` that is not `Bearer`.
    private static func credential(of request: HTTPRequest, forWriting: Bool) throws(Problem) -> (token: [UInt8], fromQuery: Bool)? {
        if let header = request.header("authorization") {
            guard header.lowercased().hasPrefix("bearer ") else { throw Problem.unauthorized }
            return (Array(header.utf8.dropFirst(7).drop { $0 == UInt8(ascii: " ") }), false)
        }
        guard !forWriting, ["GET", "HEAD"].contains(request.method), let parameter = request.query["access_token"] else { return nil }
        return (Array(parameter.utf8), true)
    }

    /// `wait`, cut short to end at `expiresAt` (seconds since 1970) when that comes first
    /// (rounded up to the millisecond: a wait cut short ends once the token has expired).
    /// Computed in seconds as a `Double` and compared before any conversion, so that no
    /// token time (however far off) can trap.
    func duration(upTo wait: Duration, before expiresAt: Double) -> Duration {
        let left = expiresAt - feeds.clock.secondsSince1970()
        guard left.isFinite, left < Double(wait.components.seconds) else { return wait }
        return .milliseconds(Int64(max(0, (left * 1000).rounded(.up))))
    }
}

/// What a request was let in by (``BatchDiffService/authorize(_:_:feed:)``).
struct Credentials: Sendable {
    /// The grant of the signed token it was let in by.
    var grant: TokenGrant?
    /// The token, static or signed, it was let in by; `nil` when none was needed.
    var token: [UInt8]?
    /// Whether it reads a public feed (`--public-feeds`): its answer is the same whoever asks.
    var readsPublicFeed = false

    /// Who `request` (the request let in by these) comes from, for limits per client, as
    /// bytes (two subjects that Unicode deems equivalent are two clients): the subject of
    /// its signed token, else that token's header and payload (its signature is left out:
    /// the same claims signed twice, or an ECDSA signature malleated, are one client), else
    /// its static token, else its address (behind a proxy, every client's is the proxy's).
    /// A token the server did not need names no one: a client could send a new one with
    /// each request.
    func client(of request: HTTPRequest) -> [UInt8] {
        if let subject = grant?.subject { return Array("sub ".utf8) + subject.utf8 }
        if let token {
            let signed = grant != nil ? token.lastIndex(of: UInt8(ascii: ".")).map { token[..<$0] } : nil
            return Array("token ".utf8) + (signed ?? token[...])
        }
        return Array("address ".utf8) + request.clientAddress.utf8
    }
}

/// Compares two byte strings in time that depends on their lengths only.
func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
    var difference: UInt8 = lhs.count == rhs.count ? 0 : 1
    for index in 0..<max(lhs.count, rhs.count) {
        difference |= (index < lhs.count ? lhs[index] : 0) ^ (index < rhs.count ? rhs[index] : 0)
    }
    return difference == 0
}
