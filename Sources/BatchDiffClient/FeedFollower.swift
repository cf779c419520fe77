import BatchDiff
import Foundation

/// Follows one feed: an `AsyncSequence` of its versions as they come, each with the whole
/// collection and the update that leads to it from the one before.
///
/// It long polls `GET /feeds/{id}/changes`, applies each answer to the collection it holds
/// (or takes the whole collection of a reload), and keeps going through what a network and
/// a server do to a client:
/// - a version no longer retained, or an answer that does not fit what it holds (410, a
///   count that differs): it fetches the whole collection again (`since=0`) and diffs it
///   against what it shows, with the differ the server uses
///   (``FeedCollection/recoveryBatch(to:identity:)``): that update is a batch, animated as
///   any other (a reload only where sections cannot be paired);
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
        var configuration = configuration
        if !MergeEntry<Item>.canMerge || !MergeEntry<Header>.canMerge { configuration.values = .whole }
        return Iterator(configuration: configuration, version: start?.version ?? 0, collection: start?.collection, identity: identity)
    }

    /// Reads the feed's updates one by one.
    public struct Iterator: AsyncIteratorProtocol {
        let configuration: FollowerConfiguration
        /// The version held, and its collection (`nil` before the first answer).
        var version: Int
        var collection: FeedCollection<Header, Item>?
        let identity: @Sendable (Item) -> Identity
        var backoff = Backoff()
        /// The cursor the next long poll asks with: the last answer's `BatchDiff-Cursor`, so
        /// that a cache in front may keep an empty answer for the followers it holds.
        var cursor = 0
        /// Following a window: the window the collection held is of (`nil` before the first
        /// answer, and when it is to be fetched again from nothing).
        var heldWindow: RowWindow?
        /// Following a window: the whole collection's rows (sections), from the last answer.
        var total: Int?
        /// Following a window: where the window held starts in the collection, from the last
        /// answer (a window anchored on a row: just after it).
        var heldOffset: Int?

        /// The next version of the feed (or, following a window that moved, the rows the
        /// new window holds); `nil` once the task is cancelled.
        public mutating func next() async throws -> FeedUpdate<Header, Item>? {
            while !Task.isCancelled {
                if let moved = configuration.window?.window, let heldWindow, collection != nil, moved != heldWindow {
                    if let update = try await move(to: moved) { return update }
                    continue
                }
                let window = heldWindow ?? configuration.window?.window
                let response: HTTPClientResponse
                do {
                    // A long poll of a window is cut short when the window moves.
                    let (version, cursor) = (version, cursor)
                    let answered = try await configuration.sendAuthorized({ token in
                        configuration.changesRequest(since: version, window: window, cursor: cursor, token: token)
                    }, by: { request in try await send(request, window: window) })
                    guard let answered else { continue }
                    response = answered
                } catch {
                    if Task.isCancelled { return nil }
                    if let error = error as? TransportError, !error.isRetryable { throw error }
                    await retry(after: backoff.next(), because: "the server cannot be reached (\(error))")
                    continue
                }
                let problem = try? JSONDecoder().decode(ProblemDocument.self, from: Data(response.body))
                switch response.status {
                case 200:
                    if let next = response.header("batchdiff-cursor").flatMap(Int.init) { cursor = next }
                    if let update = try await accept(response, window: window) { return update }
                case 410:
                    if problem?.code == "cursor_gone", let window, let anchor = window.after {
                        // The row the window was anchored after is gone: the window stays
                        // where it stood, by its offset, and is read again from nothing.
                        let standing = RowWindow(offset: heldOffset ?? 0, limit: window.limit)
                        configuration.window?.move(to: standing)
                        configuration.onRetry?("the row \(anchor) the window followed is gone; following the window at offset \(standing.offset)", 0)
                    }
                    // Not retained, or a version of an earlier life of the feed: start again.
                    version = 0
                    heldWindow = nil
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

        /// `request`, sent; following a window, `nil` as soon as the window moves from `window`
        /// (the exchange is cancelled).
        private func send(_ request: HTTPClientRequest, window: RowWindow?) async throws -> HTTPClientResponse? {
            let transport = configuration.transport
            guard let control = configuration.window, let window else { return try await transport.send(request) }
            return try await withThrowingTaskGroup(of: HTTPClientResponse?.self) { group in
                group.addTask { try await transport.send(request) }
                group.addTask {
                    await control.waitForMove(from: window)
                    return nil
                }
                let first = try await group.next() ?? nil
                group.cancelAll()
                return first
            }
        }

        /// The update a `changes` answer for `window` (following one) makes, or `nil` when it
        /// holds none (a long poll that timed out, an answer that did not fit and must be
        /// fetched again).
        private mutating func accept(_ response: HTTPClientResponse, window: RowWindow?) async throws -> FeedUpdate<Header, Item>? {
            try await accept(try Self.changes(of: response), window: window)
        }

        /// `response`'s body as a `changes` answer.
        private static func changes(of response: HTTPClientResponse) throws -> FeedChanges<Header, Item> {
            do {
                return try JSONDecoder().decode(FeedChanges<Header, Item>.self, from: Data(response.body))
            } catch {
                throw TransportError("the server's answer is not a changes answer: \(error)")
            }
        }

        /// The update `changes` (an answer for `window`, following one) makes, as ``accept(_:window:)``.
        private mutating func accept(_ changes: FeedChanges<Header, Item>, window: RowWindow?) async throws -> FeedUpdate<Header, Item>? {
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
                heldWindow = nil
                await retry(after: backoff.next(), because: "an answer did not fit the collection held; fetching it whole")
                return nil
            }
            backoff.reset()
            // An answer from nothing replaces what was shown (after a 410, or an answer that
            // did not fit): the batch from what was shown, diffed here, so nothing flashes.
            let shown = held == nil ? collection : nil
            let update = shown.map { shown in
                // More changes than `maxChanges`, as the server would answer them: a reload.
                let batch = shown.recoveryBatch(to: next, identity: identity, idKey: configuration.idKey)
                let fits = (batch?.sectionedBatch?.operationCount).map { $0 <= configuration.maxChanges ?? .max } ?? false
                return fits ? batch! : .reload(oldCounts: shown.counts, newCounts: next.counts)
            } ?? changes.update
            let replaces = shown != nil
            version = changes.to
            collection = next
            heldWindow = window
            heldOffset = changes.offset ?? heldOffset
            total = changes.total?.new ?? total
            return FeedUpdate(
                version: version, collection: next, update: update, changedMembers: replaces ? nil : changes.changedMembers, total: total
            )
        }

        /// Moves the rows held to window `target`. Rows held at an older version than the
        /// latest are brought to it first: that update is the answer (the move comes on the
        /// next call). At the latest, the rows `target` lacks are paged (a page of another
        /// version is not taken: `nil`, and the next call brings the rows to it), and the
        /// answer takes the rows shown to the new window: those that leave it deleted, those
        /// that come into it inserted. A version no longer retained starts the window again
        /// from nothing (a reload, on the next call); a server that cannot answer now is
        /// tried again after a growing delay.
        private mutating func move(to target: RowWindow) async throws -> FeedUpdate<Header, Item>? {
            guard let from = heldWindow, let held = collection else { return nil }
            let (heldVersion, transport) = (version, configuration.transport)
            let response = try? await configuration.sendAuthorized({ token in
                configuration.changesRequest(since: heldVersion, window: from, wait: 0, token: token)
            }, by: { request in try await transport.send(request) })
            guard let response, response.status == 200 else {
                if response?.status == 410 {
                    version = 0
                    heldWindow = nil
                } else {
                    await retry(after: backoff.next(), because: "the window could not be moved (\(response.map { "the server answered \($0.status)" } ?? "no answer"))")
                }
                return nil
            }
            let answer = try Self.changes(of: response)
            guard answer.to == version else { return try await accept(answer, window: from) }
            if from.after != nil || target.after != nil {
                return try await moveByPage(held, from: answer.offset ?? from.offset, to: target)
            }
            // The rows held cover `from.offset ..< from.offset + held.windowCount`; the rest is paged.
            let wanted = target.offset..<target.offset + target.limit
            let start = Swift.max(from.offset, wanted.lowerBound)
            let kept = start..<Swift.max(start, Swift.min(from.offset + held.windowCount, wanted.upperBound))
            var head: FeedCollection<Header, Item>?
            var tail: FeedCollection<Header, Item>?
            for (range, isHead) in kept.isEmpty ? [(wanted, false)] : [(wanted.lowerBound..<kept.lowerBound, true), (kept.upperBound..<wanted.upperBound, false)] {
                guard !range.isEmpty else { continue }
                guard let page = await fetchPage(RowWindow(offset: range.lowerBound, limit: range.count)) else {
                    await retry(after: backoff.next(), because: "a page of the moved window could not be read")
                    return nil
                }
                // Of another version: the rows held are brought to it on the next call.
                guard page.version == version else { return nil }
                if isHead { head = page.data } else { tail = page.data }
                total = page.total
            }
            let keptHeld = kept.isEmpty ? 0..<0 : (kept.lowerBound - from.offset)..<(kept.upperBound - from.offset)
            guard let (next, update) = held.moved(keeping: keptHeld, head: head, tail: tail) else {
                throw TransportError("a page of another shape than the collection held", isRetryable: false)
            }
            backoff.reset()
            (heldWindow, heldOffset) = (target, target.offset)
            collection = next
            return FeedUpdate(version: version, collection: next, update: update, changedMembers: nil, total: total)
        }

        /// Moves `held`, the rows of a window that starts at `heldStart` in the latest
        /// collection (where the rows are), to window `target` (one of them anchored on a
        /// row): the target read as one page, the rows both hold kept, the rest deleted and
        /// inserted. An anchor gone from the latest moves the window to where the rows held
        /// stand; a page of another version is not taken (`nil`: the next call brings the
        /// rows to it).
        private mutating func moveByPage(_ held: FeedCollection<Header, Item>, from heldStart: Int, to target: RowWindow) async throws -> FeedUpdate<Header, Item>? {
            let response = await pageResponse(target)
            if response?.status == 410, target.after != nil {
                configuration.window?.move(to: RowWindow(offset: heldStart, limit: target.limit))
                return nil
            }
            guard let response, response.status == 200, let page = try? JSONDecoder().decode(FeedPage<Header, Item>.self, from: Data(response.body)) else {
                await retry(after: backoff.next(), because: "the moved window could not be read")
                return nil
            }
            guard page.version == version else { return nil }
            let pageEnd = page.offset + page.data.windowCount
            let (lower, upper) = (Swift.max(page.offset, heldStart), Swift.min(pageEnd, heldStart + held.windowCount))
            let kept = lower < upper ? lower..<upper : pageEnd..<pageEnd
            let head = kept.isEmpty ? nil : page.data.elements(0..<kept.lowerBound - page.offset)
            let tail = page.data.elements(kept.upperBound - page.offset..<page.data.windowCount)
            let keptHeld = kept.isEmpty ? 0..<0 : (kept.lowerBound - heldStart)..<(kept.upperBound - heldStart)
            guard let (next, update) = held.moved(keeping: keptHeld, head: head, tail: tail) else {
                throw TransportError("a page of another shape than the collection held", isRetryable: false)
            }
            backoff.reset()
            (heldWindow, heldOffset, collection, total) = (target, page.offset, next, page.total)
            return FeedUpdate(version: version, collection: next, update: update, changedMembers: nil, total: total)
        }

        /// The page of the rows (sections) `window` holds, or `nil` when the server cannot
        /// give it now.
        private func fetchPage(_ window: RowWindow) async -> FeedPage<Header, Item>? {
            guard let response = await pageResponse(window), response.status == 200 else { return nil }
            return try? JSONDecoder().decode(FeedPage<Header, Item>.self, from: Data(response.body))
        }

        /// The server's answer to the page of `window`, or `nil` when it cannot be reached.
        private func pageResponse(_ window: RowWindow) async -> HTTPClientResponse? {
            let transport = configuration.transport
            return try? await configuration.sendAuthorized({ token in configuration.pageRequest(window, token: token) }, by: { request in
                try await transport.send(request)
            })
        }

        /// Tells ``FollowerConfiguration/onRetry`` why and for how long, then waits.
        private func retry(after seconds: TimeInterval, because reason: String) async {
            configuration.onRetry?(reason, seconds)
            await pause(seconds)
        }

        /// Waits `seconds` on the configuration's clock; a cancelled task stops waiting (and
        /// the loop ends).
        private func pause(_ seconds: TimeInterval) async {
            try? await configuration.clock.sleep(for: .nanoseconds(Int64(seconds * 1e9)), tolerance: nil)
        }
    }
}

extension FeedFollower where Item: Identifiable, Identity == Item.ID {
    /// A follower whose items are identified by their `id`.
    public init(_ configuration: FollowerConfiguration, from start: (version: Int, collection: FeedCollection<Header, Item>)? = nil) {
        self.init(configuration, from: start, identity: \.id)
    }
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
