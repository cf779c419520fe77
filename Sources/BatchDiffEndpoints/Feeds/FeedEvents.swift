import BatchDiffFeeds
import BatchDiffJSON
import HTTPServer

/// A feed's changes as server-sent events (docs/feeds.md §6.1): `GET /feeds/{id}/changes`
/// with `Accept: text/event-stream`. Each new version is one event whose `id` is the version
/// and whose data is the `changes` answer from the previous event's version; a comment is
/// sent when no version came for a heartbeat's time. The stream is a parked connection: no
/// thread waits for it.
extension BatchDiffService {
    /// Whether `request` asks for an event stream: a GET whose `Accept` names
    /// `text/event-stream` with a weight above 0.
    static func asksForEvents(_ request: HTTPRequest) -> Bool {
        guard request.method == "GET", let accept = request.header("accept") else { return false }
        return qualityValues(accept).contains { $0.value == "text/event-stream" && $0.quality > 0 }
    }

    /// Answers through `pending`: a problem document when the request is wrong or the feed
    /// unknown, else the stream, until its client goes away, the feed is deleted or the
    /// client's version is no longer retained, or the server shuts down.
    func changeEvents(_ name: String, _ request: HTTPRequest, _ credentials: Credentials, answeringThrough pending: PendingResponse) async {
        let start: (question: ChangesQuestion, expiresAt: Double?)
        let client: [UInt8]
        do throws(Problem) {
            let grant = credentials.grant
            client = credentials.client(of: request)
            let given = try Self.lastEventID(request)
            let question = try await changesQuestion(name, request, since: given)
            _ = try await feedCall { () async throws(FeedError) in try await self.feeds.latest(of: question.id) }
            guard question.rangeEnd == nil else { throw Problem.badQuery("to: a stream follows the feed to its latest version; ask for a range without Accept: text/event-stream") }
            start = (question, grant?.expiresAt)
        } catch {
            pending.send(error.response)
            return
        }
        guard clientStreams.enter(client) else {
            pending.send(Problem.tooManyStreams(limit: configuration.maxStreamsPerClient ?? 0).response)
            return
        }
        defer { clientStreams.leave(client) }
        // The task is cancelled when the stream ends (PendingResponse.whenAbandoned).
        guard let stream = pending.stream(scoped(Self.eventStreamHead, request, credentials)) else { return }
        let question = start.question
        await sendEvents(of: question.id, since: question.since, options: question.options, window: question.window, until: start.expiresAt, to: stream)
    }

    /// The stream's status and headers: nothing may store it or hold it back.
    private static let eventStreamHead = HTTPResponse(status: 200, headers: [
        ("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-cache"), ("X-Accel-Buffering", "no"), ("Vary", "Accept"),
    ])

    /// Milliseconds a browser waits before it reconnects a stream that ended.
    private static let reconnectDelay = 1000

    /// `Last-Event-ID`, a browser's version when it reconnects: it takes precedence over `since`.
    private static func lastEventID(_ request: HTTPRequest) throws(Problem) -> Int? {
        guard let text = request.header("last-event-id") else { return nil }
        guard let version = Int(String(Substring(trimmed(text.utf8[...])))), version >= 0 else {
            throw Problem.badHeader("Last-Event-ID: expected a version number, not \(text.prefix(40).debugDescription)")
        }
        return version
    }

    /// Writes the events of feed `id` from version `since` until the stream closes or the
    /// feed cannot go on: `event: gone` (with `id: 0`, so that a browser reconnecting starts
    /// again from the empty collection) when the client's version is no longer retained,
    /// `event: problem` when the feed is deleted or its store fails, or when the signed token
    /// it was opened with expires (`expiresAt`: a 401 `invalid_token`); then the stream ends.
    /// A stream of a `window` sends an event only when its window changes: a version that
    /// leaves it as it was moves the stream on without one, unless nothing was written for a
    /// heartbeat's time (then its empty event is sent: the stream stays alive through
    /// proxies, and a browser's `Last-Event-ID` stays a retained version).
    private func sendEvents(
        of id: FeedID, since first: Int, options: AnswerOptions, window: FeedWindow?, until expiresAt: Double?, to stream: ResponseStream
    ) async {
        var since = first
        var open = await stream.write(ServerSentEvent.retry(milliseconds: Self.reconnectDelay))
        var written = feeds.clock.elapsed()
        while open && !Task.isCancelled {
            let heartbeat = Duration.seconds(max(1, configuration.eventHeartbeat))
            do throws(FeedError) {
                let wait = expiresAt.map { duration(upTo: heartbeat, before: $0) } ?? heartbeat
                // One call: it waits for the next version, then answers from what the wake
                // brought (nothing is read from the store for a stream at the latest).
                let answer = if let window {
                    try await feeds.changes(of: id, since: since, wait: wait, window: window, options: options, untilItChanges: false)
                } else {
                    try await feeds.changes(of: id, since: since, wait: wait, options: options)
                }
                // A wait cut short by the token's expiry, with nothing new: the stream ends.
                if wait < heartbeat, answer.latest == since {
                    await stream.write(ServerSentEvent.event("problem", id: nil, data: Problem.invalidToken("the token expired").response.body))
                    break
                }
                guard answer.latest != since else {
                    open = await stream.write(ServerSentEvent.comment("heartbeat"))
                    written = feeds.clock.elapsed()
                    continue
                }
                if window == nil || answer.operationCount > 0 || feeds.clock.elapsed() - written >= heartbeat {
                    open = await stream.write(ServerSentEvent.event(id: answer.latest, data: answer.body, hasLineBreaks: answer.answer.memo(.hasLineBreaks)))
                    written = feeds.clock.elapsed()
                }
                since = answer.latest
            } catch {
                let problem = Problem(error).response.body
                if case .versionGone = error {
                    await stream.write(ServerSentEvent.event("gone", id: 0, data: problem))
                } else {
                    await stream.write(ServerSentEvent.event("problem", id: nil, data: problem))
                }
                break
            }
        }
        stream.finish()
    }
}
