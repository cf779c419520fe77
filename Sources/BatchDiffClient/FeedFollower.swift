import BatchDiff
import Foundation

/// Follows one feed: an `AsyncSequence` of its versions as they come, each with the whole
/// collection and the update that leads to it from the one before.
///
/// It long polls `GET /feeds/{id}/changes`, applies each answer to the collection it holds
/// (or takes the whole collection of a reload), and keeps going through what a network and
/// a server do to a client:
/// - a version no longer retained, or an answer that does not fit what it holds (410, a
///   count that differs): it fetches the whole collection again (`since=0`), and that update
///   is a reload;
/// - a feed deleted (404 `feed_not_found`): it waits for the feed to come back;
/// - 503, 429, 5xx and network errors: it tries again after a growing delay, or after
///   `Retry-After` when the server gives one.
/// Other errors end the sequence by throwing: the ``ProblemDocument`` of a token refused
/// or a bad feed id, a ``TransportError`` that no retry can mend (a bad URL, an answer too
/// large), a ``BatchError`` when even a whole collection does not apply. Cancelling the
/// task that iterates ends it (`next()` returns `nil`).
public struct FeedFollower<Header: Decodable & Sendable, Item: Decodable & Sendable, Identity: Hashable>: AsyncSequence, Sendable {
    public typealias Element = FeedUpdate<Header, Item>

    private let configuration: FollowerConfiguration
    private let start: (version: Int, collection: FeedCollection<Header, Item>)?
    private let identity: @Sendable (Item) -> Identity

    /// Follows feed `feed` of the server at `configuration.serverURL`, from nothing (version
    /// 0: the first update holds the whole collection) or from `start`, a version and its
    /// collection that the app kept. `identity` says what makes two items the same row.
    public init(
        _ configuration: FollowerConfiguration,
        from start: (version: Int, collection: FeedCollection<Header, Item>)? = nil,
        identity: @escaping @Sendable (Item) -> Identity
    ) {
        self.configuration = configuration
        self.start = start
        self.identity = identity
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(configuration: configuration, version: start?.version ?? 0, collection: start?.collection, identity: identity)
    }

    /// Reads the feed's updates one by one.
    public struct Iterator: AsyncIteratorProtocol {
        let configuration: FollowerConfiguration
        /// The version held, and its collection (`nil` before the first answer).
        var version: Int
        var collection: FeedCollection<Header, Item>?
        let identity: @Sendable (Item) -> Identity
        var backoff = Backoff()

        /// The next version of the feed; `nil` once the task is cancelled.
        public mutating func next() async throws -> FeedUpdate<Header, Item>? {
            while !Task.isCancelled {
                let response: HTTPClientResponse
                do {
                    response = try await configuration.transport.send(configuration.changesRequest(since: version))
                } catch {
                    if Task.isCancelled { return nil }
                    if let error = error as? TransportError, !error.isRetryable { throw error }
                    await retry(after: backoff.next(), because: "the server cannot be reached (\(error))")
                    continue
                }
                let problem = try? JSONDecoder().decode(ProblemDocument.self, from: Data(response.body))
                switch response.status {
                case 200:
                    if let update = try await accept(response) { return update }
                case 410:
                    // Not retained, or a version of an earlier life of the feed: start again.
                    version = 0
                case 404 where problem?.code == "feed_not_found", 429, 500...:
                    // At least a short pause, whatever `Retry-After` says.
                    let retryAfter = response.header("retry-after").flatMap(Int.init).map { TimeInterval(Swift.min(Swift.max($0, 0), 300)) }
                    let reason = response.status == 404
                        ? "feed \(configuration.feed) does not exist (yet)"
                        : "the server answered \(response.status)\(problem.map { " (\($0.code))" } ?? "")"
                    await retry(after: Swift.max(retryAfter ?? backoff.next(), Backoff.shortest), because: reason)
                default:
                    throw problem ?? TransportError("the server answered \(response.status)", isRetryable: false)
                }
            }
            return nil
        }

        /// The update a `changes` answer makes, or `nil` when it holds none (a long poll
        /// that timed out, an answer that did not fit and must be fetched again).
        private mutating func accept(_ response: HTTPClientResponse) async throws -> FeedUpdate<Header, Item>? {
            let changes: FeedChanges<Header, Item>
            do {
                changes = try JSONDecoder().decode(FeedChanges<Header, Item>.self, from: Data(response.body))
            } catch {
                throw TransportError("the server's answer is not a changes answer: \(error)")
            }
            guard changes.to != version || collection == nil else {
                // Nothing new (a long poll that timed out): a short pause all the same, so
                // that a client without a wait does not spin.
                backoff.reset()
                if configuration.wait == 0 { await pause(Backoff.shortest) }
                return nil
            }
            let held = version == 0 ? nil : collection
            let next: FeedCollection<Header, Item>
            do {
                guard changes.from == version else { throw BatchError("an answer from version \(changes.from), not \(version)") }
                next = try changes.applied(to: held, identity: identity)
            } catch {
                // A whole collection that does not apply is the server's fault: say so.
                guard held != nil else { throw error }
                // What the server diffed is not what this client holds: fetch it all again.
                version = 0
                await retry(after: backoff.next(), because: "an answer did not fit the collection held; fetching it whole")
                return nil
            }
            backoff.reset()
            // An answer from nothing replaces what was shown: the view reloads.
            let replaces = held == nil && collection != nil
            let update = replaces ? BatchUpdate.reload(oldCounts: collection!.counts, newCounts: next.counts) : changes.update
            version = changes.to
            collection = next
            return FeedUpdate(
                version: version, collection: next, update: update, changedMembers: replaces ? nil : changes.changedMembers, total: changes.total?.new
            )
        }

        /// Tells ``FollowerConfiguration/onRetry`` why and for how long, then waits.
        private func retry(after seconds: TimeInterval, because reason: String) async {
            configuration.onRetry?(reason, seconds)
            await pause(seconds)
        }

        /// Waits `seconds`; a cancelled task stops waiting (and the loop ends).
        private func pause(_ seconds: TimeInterval) async {
            try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
        }
    }
}

extension FeedFollower where Item: Identifiable, Identity == Item.ID {
    /// A follower whose items are identified by their `id`.
    public init(_ configuration: FollowerConfiguration, from start: (version: Int, collection: FeedCollection<Header, Item>)? = nil) {
        self.init(configuration, from: start, identity: \.id)
    }
}

/// One version of a followed feed.
public struct FeedUpdate<Header, Item> {
    /// The version.
    public var version: Int
    /// The whole collection at that version.
    public var collection: FeedCollection<Header, Item>
    /// What turns the collection shown before into this one: the batch to animate (from
    /// the empty collection, for the first update from nothing), or a reload (a refetch
    /// after a 410 or a mismatch, or more changes than `maxChanges`).
    public var update: BatchUpdate
    /// With ``FollowerConfiguration/changedMembers``, the members that changed in each row
    /// the batch reloads (and section header it updates).
    public var changedMembers: ChangedMemberNames?
    /// Following a window (``FollowerConfiguration/window``): the rows of the whole
    /// collection at this version (`collection` holds the window's).
    public var total: Int?
}

/// A window of a list feed's rows, `offset ..< offset+limit` (docs/feeds.md §5.3).
public struct RowWindow: Hashable, Sendable {
    public var offset: Int
    public var limit: Int

    public init(offset: Int, limit: Int) {
        self.offset = Swift.max(offset, 0)
        self.limit = Swift.min(Swift.max(limit, 1), 10_000)
    }
}

extension FeedUpdate: Sendable where Header: Sendable, Item: Sendable {}

/// Where a follower reads and how: server, feed, token, transport, long-poll wait.
public struct FollowerConfiguration: Sendable {
    /// The server's base URL, e.g. `http://127.0.0.1:8080`.
    public var serverURL: String
    public var feed: String
    /// Sent as `Authorization: Bearer <token>` when set.
    public var token: String?
    public var transport: any HTTPTransport
    /// How long each long poll waits at the server (`wait=`), in whole seconds; 0 polls
    /// (with a short pause between answers that bring nothing).
    public var wait: Int
    /// Asks the server for a reload instead of a batch of more than this many operations.
    public var maxChanges: Int?
    /// Asks the server for the members that changed in each reloaded row.
    public var changedMembers: Bool
    /// Follows this window of a list feed's rows only: the follower holds the window's
    /// rows, and each update takes them to the window of the next version (rows scrolled
    /// out by inserts above are deleted, rows brought in inserted). `nil`: the whole feed.
    public var window: RowWindow?
    /// Told each time the follower waits before it tries again: why (the server cannot be
    /// reached, the feed does not exist yet, a 503), and for how many seconds.
    public var onRetry: (@Sendable (_ reason: String, _ seconds: TimeInterval) -> Void)?

    public init(
        serverURL: String, feed: String, token: String? = nil, transport: any HTTPTransport,
        wait: Int = 30, maxChanges: Int? = nil, changedMembers: Bool = false, window: RowWindow? = nil,
        onRetry: (@Sendable (_ reason: String, _ seconds: TimeInterval) -> Void)? = nil
    ) {
        self.serverURL = serverURL.hasSuffix("/") ? String(serverURL.dropLast()) : serverURL
        self.feed = feed
        self.token = token
        self.transport = transport
        self.wait = Swift.max(wait, 0)
        self.maxChanges = maxChanges
        self.changedMembers = changedMembers
        self.window = window
        self.onRetry = onRetry
    }

    /// `GET …/changes?since=N&wait=S`; the request may take the wait and 15 s more.
    func changesRequest(since version: Int) -> HTTPClientRequest {
        var url = "\(serverURL)/feeds/\(percentEncoded(feed))/changes?since=\(version)&wait=\(wait)"
        if let maxChanges { url += "&maxChanges=\(maxChanges)" }
        if changedMembers { url += "&changedMembers=true" }
        if let window { url += "&offset=\(window.offset)&limit=\(window.limit)" }
        var headers = [(name: "Accept", value: "application/json")]
        if let token { headers.append((name: "Authorization", value: "Bearer \(token)")) }
        return HTTPClientRequest(method: "GET", url: url, headers: headers, timeout: TimeInterval(wait + 15))
    }
}

/// Delays between tries, in seconds: 0.25 doubling to 4, each with up to a quarter more at random.
struct Backoff: Sendable {
    /// The shortest pause between two tries.
    static let shortest: TimeInterval = 0.25

    private var tries = 0

    mutating func next() -> TimeInterval {
        defer { tries += 1 }
        return Self.shortest * Double(1 << min(tries, 4)) * Double.random(in: 1...1.25)
    }

    mutating func reset() { tries = 0 }
}

/// `name` with every byte but `A-Z a-z 0-9 . _ - ~` percent-encoded (a URL path segment).
func percentEncoded(_ name: String) -> String {
    var encoded = ""
    for byte in name.utf8 {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "~"):
            encoded.unicodeScalars.append(Unicode.Scalar(byte))
        default:
            encoded += String(format: "%%%02X", byte)
        }
    }
    return encoded
}
