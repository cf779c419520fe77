import BatchDiffFeeds
import BatchDiffTokens
import BatchDiffJSON
import HTTPServer
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// The feed routes: HTTP in and out, the feed core in between (docs/feeds.md). Each is
/// answered off the server's threads, since the feed core's calls may wait for the store.
extension BatchDiffService {
    /// `PUT /feeds/{id}`: stores a snapshot; `If-Match: "N"` makes it conditional,
    /// `If-None-Match: *` creates only, `If-Match: *` writes only an existing feed;
    /// `changedMembers` and `maxChanges` shape the answer's batch.
    func putFeed(_ name: String, _ request: HTTPRequest) async throws(Problem) -> HTTPResponse {
        let id = try writtenFeedID(name)
        let idKey = request.query["idKey"]
        if let idKey, !(1...128).contains(idKey.utf8.count) { throw Problem.badQuery("idKey: must be 1 to 128 bytes") }
        let uniqueIdentities = try booleanParameter(request.query, "uniqueIdentities")
        let order = (rows: try sortOrder(request.query, "orderBy"), sections: try sortOrder(request.query, "sectionOrderBy"))
        let options = try AnswerOptions(query: request.query)
        if options.format == .jsonPatch { throw Problem.badQuery("format: json-patch answers changes and POST /diff; a PUT answers batch or steps") }
        let condition = EntityTag.writeCondition(ifMatch: request.header("if-match"), ifNoneMatch: request.header("if-none-match"))
        let write = try await feedCall { () async throws(FeedError) in
            try await self.feeds.write(
                request.body, to: id, idKey: idKey, uniqueIdentities: uniqueIdentities, order: order, condition: condition, options: options
            )
        }
        returnFreedMemory(after: write)
        return .json(200, write.body, headers: [("ETag", EntityTag.of(version: write.version))])
    }

    /// `PATCH /feeds/{id}`: changes the feed by identity (`{"ops": [...]}`), answered as a
    /// `PUT`; `If-Match` and the query options likewise; `Idempotency-Key` answers a repeat
    /// as the first time.
    func patchFeed(_ name: String, _ request: HTTPRequest) async throws(Problem) -> HTTPResponse {
        let id = try writtenFeedID(name)
        let options = try AnswerOptions(query: request.query)
        if options.format == .jsonPatch { throw Problem.badQuery("format: json-patch answers changes and POST /diff; a PATCH answers batch or steps") }
        let condition = EntityTag.writeCondition(ifMatch: request.header("if-match"), ifNoneMatch: request.header("if-none-match"))
        let key = request.header("idempotency-key")
        if let key, !(1...128).contains(key.utf8.count) || !key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) {
            throw Problem.badHeader("Idempotency-Key: 1 to 128 visible ASCII characters, not \(key.prefix(140).debugDescription)")
        }
        let write = try await feedCall { () async throws(FeedError) in
            try await self.feeds.patch(request.body, to: id, condition: condition, idempotencyKey: key, options: options)
        }
        returnFreedMemory(after: write)
        return .json(200, write.body, headers: [("ETag", EntityTag.of(version: write.version))])
    }

    /// The order the query parameter `name` writes (`orderBy=-score,id`), if given.
    private func sortOrder(_ query: [String: String], _ name: String) throws(Problem) -> SortOrder? {
        guard let text = query[name] else { return nil }
        do throws(SortOrderError) {
            return try SortOrder(parsing: text)
        } catch {
            throw Problem.badQuery("\(name): \(error)")
        }
    }

    /// After a write of a big feed, returns the memory its work freed to the system once
    /// big writes pause: the allocator keeps freed memory for the next big request
    /// (``ProcessSetup/keepFreedMemory()``), but a feed's versions stay allocated between
    /// the transient blocks of each write, so a busy feed's server would otherwise keep
    /// about twice what it holds.
    private func returnFreedMemory(after write: FeedWrite) {
        if write.textCount > 1 << 20 { freedMemory.afterBigWrite() }
    }

    /// `DELETE /feeds/{id}`.
    func deleteFeed(_ name: String) async throws(Problem) -> HTTPResponse {
        let id = try writtenFeedID(name)
        try await feedCall { () async throws(FeedError) in try await self.feeds.delete(id) }
        return HTTPResponse(status: 204)
    }

    /// `GET /feeds/{id}`: the latest snapshot, with `ETag`; `If-None-Match` gives 304. The
    /// answer is one per version, shared by every client (and its gzip form likewise). With
    /// `offset`, `after` or `limit`, a page of it instead (``getPage(_:_:from:limit:)``).
    func getFeed(_ name: String, _ request: HTTPRequest) async throws(Problem) -> HTTPResponse {
        let id = try await readFeedID(name)
        if let (start, limit) = try Self.pageQuery(request) { return try await getPage(id, request, from: start, limit: limit) }
        let latest = try await feedCall { () async throws(FeedError) in try await self.feeds.latest(of: id) }
        let tag = EntityTag.of(version: latest.version)
        if let ifNoneMatch = request.header("if-none-match"), EntityTag.ifNoneMatch(ifNoneMatch, names: latest.version) {
            return ResponseEncoding(request).notModified(tag: tag, bodySize: latest.answerByteCount)
        }
        let answer = try await feedCall { () async throws(FeedError) in try await latest.answer() }
        return .json(200, shared: answer, headers: [("ETag", tag)])
    }

    /// A page of feed `id`'s latest collection, `{"feed","version","total","offset","data","next"}`,
    /// with the whole feed's `ETag` (docs/feeds.md §4.1); `If-None-Match` gives 304. A public
    /// feed's page is the same for everyone: caches may keep it a second, as they keep a
    /// `changes` answer (`--public-feeds`, docs/feeds.md §5.4).
    private func getPage(_ id: FeedID, _ request: HTTPRequest, from start: PageStart, limit: Int) async throws(Problem) -> HTTPResponse {
        let page = try await feedCall { () async throws(FeedError) in try await self.feeds.page(of: id, from: start, limit: limit) }
        let tag = EntityTag.of(version: page.version)
        if let ifNoneMatch = request.header("if-none-match"), EntityTag.ifNoneMatch(ifNoneMatch, names: page.version) {
            return ResponseEncoding(request).notModified(tag: tag, bodySize: page.answer.bytes.count)
        }
        let caching = configuration.isPublic(id.name) ? [("Cache-Control", "public, max-age=1")] : []
        return .json(200, shared: page.answer, headers: [("ETag", tag)] + caching)
    }

    /// The page a `GET /feeds/{id}` asks for: `offset` (0 and up) or `after` (a row's
    /// identity), and `limit` (1 to 10,000, default 100); `nil` when it names none of them.
    private static func pageQuery(_ request: HTTPRequest) throws(Problem) -> (PageStart, limit: Int)? {
        if let cursor = request.query["after"] {
            guard request.query["offset"] == nil else { throw Problem.badQuery("offset and after: a page starts at one or the other") }
            return (.after(try Self.cursor(cursor)), try rowsLimit(request))
        }
        return try rowsQuery(request).map { (.offset($0.offset), $0.limit) }
    }

    /// `after`, a row's identity of 1 to 1,024 bytes.
    private static func cursor(_ text: String) throws(Problem) -> String {
        guard !text.isEmpty, text.utf8.count <= 1024 else {
            throw Problem.badQuery("after: expected the identity of a row (1 to 1024 bytes), not \(text.prefix(40).debugDescription)")
        }
        return text
    }

    /// The `offset` (a position, 0 or more, default 0) and `limit` of a page or a window;
    /// `nil` when the query names neither.
    private static func rowsQuery(_ request: HTTPRequest) throws(Problem) -> (offset: Int, limit: Int)? {
        guard request.query["offset"] != nil || request.query["limit"] != nil else { return nil }
        guard let text = request.query["offset"] else { return (0, try rowsLimit(request)) }
        guard let offset = Int(text), offset >= 0 else {
            throw Problem.badQuery("offset: expected a position, 0 or more, not \(text.prefix(40).debugDescription)")
        }
        return (offset, try rowsLimit(request))
    }

    /// `limit` of a page or a window, 1 to 10,000 rows, default 100.
    private static func rowsLimit(_ request: HTTPRequest) throws(Problem) -> Int {
        try limit(request, default: 100, of: "rows")
    }

    /// The query's `limit`, 1 to 10,000 `things` (`default` without one).
    private static func limit(_ request: HTTPRequest, default: Int, of things: String) throws(Problem) -> Int {
        guard let text = request.query["limit"] else { return `default` }
        guard let limit = Int(text), (1...10_000).contains(limit) else {
            throw Problem.badQuery("limit: expected 1 to 10000 \(things), not \(text.prefix(40).debugDescription)")
        }
        return limit
    }

    /// `GET /feeds`: every feed with its latest version, or for a signed token only those
    /// it names (found by each of its patterns' range of ids).
    func listFeeds(_ request: HTTPRequest, _ credentials: Credentials) async throws(Problem) -> HTTPResponse {
        let (after, limit) = try listQuery(request)
        let grant = credentials.grant
        return .json(200, try await feedCall { () async throws(FeedError) in
            guard let grant else { return try await self.feeds.list(after: after, limit: limit) }
            return try await self.feeds.list(after: after, limit: limit, matching: grant.feeds.map { ($0.text, $0.isPrefix) })
        })
    }

    /// `limit` (1 to 10,000, default 1,000) and `after` (a feed id) of `GET /feeds`.
    private func listQuery(_ request: HTTPRequest) throws(Problem) -> (after: FeedID?, limit: Int) {
        let limit = try Self.limit(request, default: 1000, of: "feeds")
        guard let text = request.query["after"] else { return (nil, limit) }
        do {
            return (try FeedID(text), limit)
        } catch {
            throw Problem.badQuery("after: expected a feed id, not \(text.prefix(140).debugDescription)")
        }
    }

    /// `GET /feeds/{id}/changes?since=N[&wait=S]`: the batch from version N to the latest,
    /// with the values; with `wait`, a client already at the latest waits for the next one;
    /// `changedMembers` and `maxChanges` shape the batch.
    /// A long poll with a signed token waits no longer than the token is valid: if it
    /// expires first, with no new version, the answer is 401 `invalid_token`.
    func changes(_ name: String, _ request: HTTPRequest, _ credentials: Credentials) async throws(Problem) -> HTTPResponse {
        let grant = credentials.grant
        let question = try await changesQuestion(name, request, since: nil)
        let (id, since, wait, options) = (question.id, question.since, question.wait, question.options)
        if let to = question.rangeEnd {
            let answer = try await feedCall { () async throws(FeedError) in try await self.feeds.changes(of: id, since: since, to: to, options: options) }
            return changesResponse(answer, caching: cacheControl(request, credentials, maxAge: 31_536_000) + ", immutable", tagged: true)
        }
        let waiting = grant.map { duration(upTo: .seconds(wait), before: $0.expiresAt) } ?? .seconds(wait)
        let client = credentials.client(of: request)
        if wait > 0 {
            guard clientStreams.enter(client) else { throw Problem.tooManyStreams(limit: configuration.maxStreamsPerClient ?? 0) }
        }
        defer { if wait > 0 { clientStreams.leave(client) } }
        let answer = try await feedCall { () async throws(FeedError) in
            guard let window = question.window else { return try await self.feeds.changes(of: id, since: since, wait: waiting, options: options) }
            return try await self.feeds.changes(of: id, since: since, wait: waiting, window: window, options: options)
        }
        // Cut short by the token's expiry, with nothing new: the token is what ended it.
        if grant != nil, waiting < .seconds(wait), answer.latest == since {
            throw Problem.invalidToken("the token expired while the request waited")
        }
        // A long poll that found nothing new is not kept by a cache: the next version comes
        // under the same URL. One that holds a batch, or a plain question, is kept a second,
        // so a cache that collapses the same question asks once a version.
        let empty = wait > 0 && answer.operationCount == 0
        let caching = empty ? "no-store" : cacheControl(request, credentials, maxAge: 1)
        guard wait > 0 else { return changesResponse(answer, caching: caching, tagged: answer.answer.mediaType == .jsonPatch) }
        // A long poll names the cursor to ask with next. A follower that asks with one asks
        // under a new URL after each wait, so nginx may keep its empty answer a second
        // (`X-Accel-Expires`, read before `Cache-Control`): the followers its cache lock
        // holds get it at once, instead of going upstream one after another.
        var headers = [(name: "BatchDiff-Cursor", value: String(cursor(after: question.cursor, empty: empty)))]
        if empty, question.cursor != nil, isShared(request, credentials) { headers.insert(("X-Accel-Expires", "1"), at: 0) }
        return changesResponse(answer, caching: caching, tagged: answer.answer.mediaType == .jsonPatch, headers: headers)
    }

    /// The cursor a long poll's answer names: the number of the 20-second period it ends
    /// in, so that followers that start apart come to ask under one URL; for an empty answer
    /// asked with that period's cursor or a later one, the one after it, so that the next
    /// question is never the one just answered (an answer with a batch moves `since`).
    private func cursor(after asked: Int?, empty: Bool) -> Int {
        let period = Int(feeds.clock.secondsSince1970()) / 20
        guard empty, let asked, asked >= period, asked < Self.maxCursor else { return period }
        return asked + 1
    }

    /// The largest `cursor` asked with: 12 digits.
    private static let maxCursor = 999_999_999_999

    /// A `changes` answer with its caching (docs/feeds.md §5.4): `Cache-Control`, `Vary` on
    /// what picks its bytes, and, when `tagged` (a range, the same bytes on every server; a
    /// JSON Patch), an `ETag` naming the version it leads to. A JSON Patch is the bare array.
    /// A request that accepts an event stream is answered with one instead (FeedEvents.swift).
    private func changesResponse(
        _ answer: ChangesAnswer, caching: String, tagged: Bool, headers first: [(name: String, value: String)] = []
    ) -> HTTPResponse {
        var headers = first + [("Cache-Control", caching), ("Vary", "Accept, Accept-Encoding")]
        if tagged { headers.append(("ETag", EntityTag.of(version: answer.latest))) }
        return .json(200, shared: answer.answer, headers: headers)
    }

    /// Who may keep an answer for `maxAge` seconds: shared caches, unless the request
    /// carried a token, in its header or its query (then the client alone), or every feed is
    /// public (`--public-feeds`).
    private func cacheControl(_ request: HTTPRequest, _ credentials: Credentials, maxAge: Int) -> String {
        "\(isShared(request, credentials) ? "public" : "private"), max-age=\(maxAge)"
    }

    /// The end of a range of versions (`to`), when the request names one: at least `since`,
    /// of the whole collection (not of `window`).
    private static func rangeEnd(_ request: HTTPRequest, since: Int, window: FeedWindow?) throws(Problem) -> Int? {
        guard let text = request.query["to"] else { return nil }
        guard let to = Int(text), to >= 0 else { throw Problem.badQuery("to: expected a version number, not \(text.debugDescription)") }
        guard to >= since else { throw Problem.badQuery("to: \(to) is below since \(since): a range runs forward") }
        guard window == nil else { throw Problem.badQuery("to: a range is of the whole collection, not of a window") }
        return to
    }

    /// What a `changes` request asks: the feed, the version the client holds (`given`, else
    /// the query's `since`), how long it waits, and the answer's options. An unknown feed is
    /// told first, whatever the query.
    func changesQuestion(
        _ name: String, _ request: HTTPRequest, since given: Int?
    ) async throws(Problem) -> ChangesQuestion {
        let id = try await readFeedID(name)
        do {
            let (since, wait) = try changesQuery(request, since: given)
            let options = try AnswerOptions(query: request.query)
            let window = try Self.window(request, options: options)
            return ChangesQuestion(
                id: id, since: since, wait: wait, options: options, window: window,
                rangeEnd: try Self.rangeEnd(request, since: since, window: window), cursor: try Self.cursor(request)
            )
        } catch {
            _ = try await feedCall { () async throws(FeedError) in try await self.feeds.latest(of: id) }
            throw error
        }
    }

    /// The `cursor` a long poll asks with, when it names one: a number from an earlier
    /// answer's `BatchDiff-Cursor` (0 to start), which only makes the URL another.
    private static func cursor(_ request: HTTPRequest) throws(Problem) -> Int? {
        guard let text = request.query["cursor"] else { return nil }
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), let cursor = Int(text), cursor <= maxCursor else {
            throw Problem.badQuery("cursor: expected a number from BatchDiff-Cursor (0 to start), not \(text.prefix(40).debugDescription)")
        }
        return cursor
    }

    /// The window a `changes` request asks for (`offset` or `after`, and `limit`:
    /// docs/feeds.md §5.3), or `nil`. What windows do not answer yet is refused, never
    /// answered for the whole collection (a client would apply that batch to its window, and
    /// show wrong rows).
    private static func window(_ request: HTTPRequest, options: AnswerOptions) throws(Problem) -> FeedWindow? {
        if let cursor = request.query["after"] {
            guard request.query["offset"] == nil else { throw Problem.badQuery("offset and after: a window starts at one or the other") }
            return FeedWindow(after: try Self.cursor(cursor), limit: try rowsLimit(request))
        }
        guard let (offset, limit) = try rowsQuery(request) else { return nil }
        return FeedWindow(offset: offset, limit: limit)
    }

    /// `since` (required unless `given`) and `wait` (capped by the longest wait configured).
    private func changesQuery(_ request: HTTPRequest, since given: Int?) throws(Problem) -> (since: Int, wait: Int) {
        let since: Int
        if let given {
            since = given
        } else {
            guard let sinceText = request.query["since"] else { throw Problem.badQuery("since: required, a version number (0 for everything)") }
            guard let value = Int(sinceText), value >= 0 else { throw Problem.badQuery("since: expected a non-negative integer, not \(sinceText.debugDescription)") }
            since = value
        }
        guard let waitText = request.query["wait"] else { return (since, 0) }
        guard let seconds = Int(waitText), seconds >= 0 else {
            throw Problem.badQuery("wait: expected a non-negative number of seconds, not \(waitText.debugDescription)")
        }
        return (since, min(seconds, configuration.maxWait))
    }

    private func feedID(_ name: String) throws(Problem) -> FeedID {
        do {
            return try FeedID(name)
        } catch {
            throw Problem(error)
        }
    }

    /// The feed id a write names: 409 `feed_is_sourced` for an id the source claims.
    private func writtenFeedID(_ name: String) throws(Problem) -> FeedID {
        let id = try feedID(name)
        if let source = configuration.source, source.claims(id) { throw Problem(FeedError.sourced(id)) }
        return id
    }

    /// The feed id a read names, its feed made first when the source claims it.
    func readFeedID(_ name: String) async throws(Problem) -> FeedID {
        let id = try feedID(name)
        if let source = configuration.source, source.claims(id) {
            try await feedCall { () async throws(FeedError) in try await source.prepare(id) }
        }
        return id
    }

    /// Calls the feed core, its errors as problem documents.
    func feedCall<Value>(_ call: () async throws(FeedError) -> Value) async throws(Problem) -> Value {
        do {
            return try await call()
        } catch {
            throw Problem(error)
        }
    }
}

extension Problem {
    /// The problem document of a feed error: the one place feed errors become statuses.
    init(_ error: FeedError) {
        switch error {
        case .invalidFeedID(let name): self = .invalidFeedID(name)
        case .notFound(let id): self = .feedNotFound(id.name)
        case .versionGone(let id, let since, let latest): self = .versionGone(feed: id.name, since: since, latest: latest)
        case .conditionFailed(let id, let latest):
            // (The write named the condition: the detail says what the feed is.)
            self = .preconditionFailed(latest.map { "feed \(id) exists, at version \($0)" } ?? "feed \(id) does not exist")
        case .malformedJSON(let error): self = .malformedJSON(error)
        case .invalidSnapshot(let detail): self = .wrongShape(detail)
        case .duplicateIdentity(let detail): self = .duplicateIdentity(detail)
        case .invalidSortKey(let detail): self = .invalidSortKey(detail)
        case .cursorGone(let id, let cursor): self = .cursorGone(feed: id.name, cursor: cursor)
        case .anchorGone(let id, let anchor, let version): self = .anchorGone(feed: id.name, anchor: anchor, inVersion: version)
        case .patchRefused(let refusal): self = .patchRefused(refusal)
        case .idempotencyKeyReused(let id, let key):
            self = Problem(
                status: 422, code: "idempotency_key_reused", title: "Idempotency key reused",
                detail: "feed \(id) has answered Idempotency-Key \(key.debugDescription) for another body; a new request needs a new key; nothing was changed"
            )
        case .storageFull(let id, let limit): self = .feedStorageFull(id.name, limit: limit)
        case .storeUnavailable(let detail): self = .storeUnavailable(detail)
        case .sourced(let id): self = .feedIsSourced(id.name)
        case .sourceUnavailable(let detail): self = .sourceUnavailable(detail)
        case .internalFailure(let detail): self = .internalError(detail)
        }
    }
}
