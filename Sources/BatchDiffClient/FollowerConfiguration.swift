import Foundation

/// Where a follower reads and how: server, feed, token, transport, long-poll wait.
public struct FollowerConfiguration: Sendable {
    /// The server's base URL, e.g. `http://127.0.0.1:8080`.
    public var serverURL: String
    public var feed: String
    /// Sent as `Authorization: Bearer <token>` when set (and no ``tokenProvider`` is).
    public var token: String?
    /// Asked for the bearer token before each request, and once more after the server
    /// refused one with a 401 (`refused` true: the token it gave last was refused), so that
    /// a follower outlives one token: return the token held, minting a new one when it is
    /// about to expire or was refused; `nil` sends none. Only a second 401 in a row ends
    /// the follower; an error it throws is waited out as a network error is.
    public var tokenProvider: (@Sendable (_ refused: Bool) async throws -> String?)?
    public var transport: any HTTPTransport
    /// How long each long poll waits at the server (`wait=`), in whole seconds; 0 polls
    /// (with a short pause between answers that bring nothing).
    public var wait: Int
    /// Asks the server for a reload instead of a batch of more than this many operations.
    public var maxChanges: Int?
    /// Asks the server for the members that changed in each reloaded row.
    public var changedMembers: Bool
    /// How reloaded rows and updated headers come (`values=`): as merge patches of the rows
    /// held by default, a tenth of the bytes when one member of ten changes; a follower of
    /// items (or headers) that are not `Codable`, which it cannot merge into, asks whole.
    public var values: FeedValues
    /// The feed's identity member (`id` by default): what names a ``JSON`` section header
    /// when sections are paired on the device (after a 410; ``FeedModel``'s sections).
    public var idKey: String
    /// Follows this window of the feed only (a list's rows, or a sectioned collection's
    /// sections): the follower holds the window's rows, and each update takes them to the
    /// window of the next version (rows scrolled out by inserts above are deleted, rows
    /// brought in inserted); moving it (``FollowedWindow/move(to:)``) moves what the
    /// follower holds. `nil`: the whole feed.
    public var window: FollowedWindow?
    /// Told each time the follower waits before it tries again: why (the server cannot be
    /// reached, the feed does not exist yet, a 503), and for how many seconds.
    public var onRetry: (@Sendable (_ reason: String, _ seconds: TimeInterval) -> Void)?
    /// The clock the follower waits on before it tries again (`ContinuousClock` unless a
    /// test holds the time).
    public var clock: any Clock<Duration>

    public init(
        serverURL: String, feed: String, token: String? = nil, tokenProvider: (@Sendable (_ refused: Bool) async throws -> String?)? = nil,
        transport: any HTTPTransport, wait: Int = 30, maxChanges: Int? = nil, changedMembers: Bool = false, values: FeedValues = .merge, idKey: String = "id",
        window: FollowedWindow? = nil, onRetry: (@Sendable (_ reason: String, _ seconds: TimeInterval) -> Void)? = nil,
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.serverURL = serverURL.hasSuffix("/") ? String(serverURL.dropLast()) : serverURL
        self.feed = feed
        self.token = token
        self.tokenProvider = tokenProvider
        self.transport = transport
        self.wait = Swift.max(wait, 0)
        self.maxChanges = maxChanges
        self.changedMembers = changedMembers
        self.values = values
        self.idKey = idKey
        self.window = window
        self.onRetry = onRetry
        self.clock = clock
    }

    /// `request`, made with the bearer token to send (``tokenProvider``'s, else ``token``),
    /// sent by `send`; after a 401, when a provider gives the tokens, made and sent once more
    /// with the one it gives when told of the refusal.
    func sendAuthorized(
        _ request: (_ token: String?) -> HTTPClientRequest, by send: (HTTPClientRequest) async throws -> HTTPClientResponse?
    ) async throws -> HTTPClientResponse? {
        guard let tokenProvider else { return try await send(request(token)) }
        let response = try await send(request(try await tokenProvider(false)))
        guard response?.status == 401 else { return response }
        return try await send(request(try await tokenProvider(true)))
    }

    /// `GET …/changes?since=N&wait=S` (of `window`, when given; `wait` overrides the
    /// long poll's; a long poll asks with `cursor`, when given), with `token`; the request
    /// may take the wait and 15 s more.
    func changesRequest(since version: Int, window: RowWindow? = nil, wait: Int? = nil, cursor: Int? = nil, token: String?) -> HTTPClientRequest {
        let wait = wait ?? self.wait
        var url = "\(serverURL)/feeds/\(percentEncoded(feed))/changes?since=\(version)&wait=\(wait)"
        if let cursor, wait > 0 { url += "&cursor=\(cursor)" }
        if let maxChanges { url += "&maxChanges=\(maxChanges)" }
        if changedMembers { url += "&changedMembers=true" }
        if values == .merge { url += "&values=merge" }
        if let window { url += "&" + window.query }
        return HTTPClientRequest(method: "GET", url: url, headers: Self.headers(token: token), timeout: TimeInterval(wait + 15))
    }

    /// `GET /feeds/{id}?offset=&limit=` (or `after=`): the page of the rows (sections)
    /// `window` holds, with `token`.
    func pageRequest(_ window: RowWindow, token: String?) -> HTTPClientRequest {
        HTTPClientRequest(method: "GET", url: "\(serverURL)/feeds/\(percentEncoded(feed))?" + window.query, headers: Self.headers(token: token), timeout: 30)
    }

    /// `Accept: application/json`, and `token` when there is one.
    private static func headers(token: String?) -> [(name: String, value: String)] {
        var headers = [(name: "Accept", value: "application/json")]
        if let token { headers.append((name: "Authorization", value: "Bearer \(token)")) }
        return headers
    }
}
