import BatchDiff
import BatchDiffFeeds
import BatchDiffJSON
import HTTPServer
import Logging
import Metrics
import Prometheus

/// The BatchDiff service: `POST /diff`, feeds with long polls, health and metrics, every
/// error a problem document. Thread-safe: the server calls it from all its threads.
package final class BatchDiffService: Sendable {
    let configuration: ServiceConfiguration
    package let feeds: Feeds
    private let logger: Logger
    /// Where the process's metrics are kept, for the `/metrics` page (``prometheusFactory(registry:)``).
    private let metricsRegistry: PrometheusCollectorRegistry
    private let requests = RequestCounters()
    private let receivedBytes = Counter(label: "batchdiff_received_bytes_total")
    private let sentBytes = Counter(label: "batchdiff_sent_bytes_total")
    private let latency = Metrics.Timer(label: "batchdiff_request_duration_seconds")
    private let accessLog: AccessLog
    /// Gives back what big feed writes freed, once they pause (``returnFreedMemory(after:)``).
    let freedMemory = FreedMemoryReturn()
    /// The parked long polls and event streams of each client, within their limit.
    let clientStreams: ClientStreams

    /// Where a finished request's ``AccessLine`` goes, while `logger` logs at `info` or below.
    package typealias AccessLog = @Sendable (AccessLine) -> Void

    /// A service whose feeds live in `store`, that records its metrics through swift-metrics
    /// (bootstrap it with ``prometheusFactory(registry:)`` first) and shows those of
    /// `metricsRegistry` on `/metrics`. Each finished request's line goes to `accessLog`
    /// while `logger` logs at `info` or below.
    package init(
        configuration: ServiceConfiguration, store: any FeedStore, logger: Logger, metricsRegistry: PrometheusCollectorRegistry,
        accessLog: @escaping AccessLog
    ) {
        self.configuration = configuration
        self.logger = logger
        self.metricsRegistry = metricsRegistry
        self.accessLog = accessLog
        feeds = Feeds(store: store, maxFeedMemory: configuration.maxFeedMemory)
        clientStreams = ClientStreams(limit: configuration.maxStreamsPerClient)
    }

    /// Decides about a request from its head: refused (no such route, a method the route
    /// does not answer, a missing or wrong token, a body that is not JSON), or accepted with
    /// what answers it once its body is read (``endpoints``).
    package func admit(_ request: HTTPRequest) -> HTTPAdmission {
        let found = Self.route(of: request.path)
        let label = found?.route.path.label ?? "other"
        // A browser's preflight carries no token: what a route allows is no secret.
        if request.method == "OPTIONS", let route = found?.route {
            return .accepted(route: label) { _ in .now(route.options) }
        }
        do {
            let (endpoint, admitted) = try endpoint(of: request, found)
            return .accepted(route: label) { [self] request in reply(to: request, with: endpoint.answer, admitted) }
        } catch {
            return .refused(error.response, route: label)
        }
    }

    /// Answers a whole request that ``admit(_:)`` accepted, gzip-encoded when the request
    /// accepts it (``ResponseEncoding``).
    /// Every answer is ``scoped(_:_:_:)`` for shared caches by the credentials it was let in by.
    private func reply(to request: HTTPRequest, with answer: Endpoint.Answer, _ admitted: Admitted) -> HTTPReply {
        let encoding = ResponseEncoding(request)
        let credentials = admitted.credentials
        switch answer {
        case .now(let answer):
            return encoding.reply(Result { () throws(Problem) in scoped(try answer(self, request, admitted), request, credentials) })
        case .computed(let answer) where request.body.count < Self.offloadedBodySize:
            return encoding.reply(Result { () throws(Problem) in scoped(try answer(self, request), request, credentials) })
        case .computed(let answer):
            return answeredLater(encoding) { service throws(Problem) in
                service.scoped(try await Workers.run { () throws(Problem) in try answer(service, request) }, request, credentials)
            }
        case .task(let answer):
            return answeredLater(encoding) { service throws(Problem) in service.scoped(try await answer(service, request, admitted), request, credentials) }
        case .taskOrEvents(let answer, _) where !Self.asksForEvents(request):
            return answeredLater(encoding) { service throws(Problem) in service.scoped(try await answer(service, request, admitted), request, credentials) }
        case .taskOrEvents(_, let events):
            return .later { [self] pending in
                let task = Task { await events(self, request, admitted, pending) }
                // A client gone away, or a stream ended: no more events are written.
                pending.whenAbandoned { task.cancel() }
            }
        }
    }

    /// The answer to requests the server refuses by itself.
    package func refusal(_ refusal: HTTPServerRefusal) -> HTTPResponse {
        switch refusal {
        case .bodyTooLarge(let limit): Problem.bodyTooLarge(limit: limit).response
        case .shuttingDown: Problem.shuttingDown.response
        case .busy(let retryAfter): Problem.serverBusy(retryAfter: retryAfter).response
        case .ambiguousFraming(let reason): Problem.badHeader(reason).response
        case .unsupportedContentEncoding(let encoding): Problem.unsupportedContentEncoding(encoding).response
        case .undecodableBody(let reason): Problem.invalidEncoding(reason).response
        }
    }

    /// Records a finished request: one log line and the metrics (never the body).
    package func observe(_ exchange: HTTPExchange) {
        // Labels come from fixed sets: a client cannot add series or break the page.
        let method = Self.isKnown(method: exchange.method) ? exchange.method : "other"
        requests.count(route: exchange.route ?? Self.routeLabel(of: exchange.path), method: method, status: exchange.status)
        latency.recordNanoseconds(Int64(exchange.nanoseconds))
        receivedBytes.increment(by: exchange.bytesIn)
        sentBytes.increment(by: exchange.bytesOut)
        if logger.logLevel <= .info { accessLog(AccessLine(method: method, exchange)) }
    }

    private static func isKnown(method: String) -> Bool {
        switch method {
        case "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH": true
        default: false
        }
    }

    /// Answers every parked long poll now, with what there is (at shutdown).
    package func releaseParkedRequests() {
        feeds.close()
    }

    /// `GET /metrics`: the Prometheus text of the process's metrics, the feeds' gauges
    /// recorded just before.
    func metricsAnswer() -> HTTPResponse {
        feeds.recordGauges()
        var text: [UInt8] = []
        metricsRegistry.emit(into: &text)
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4")], body: text)
    }

    /// The swift-metrics factory to bootstrap for a service that shows `registry` on
    /// `/metrics`: Prometheus, with request latency buckets from 0.5 ms to 60 s.
    package static func prometheusFactory(registry: PrometheusCollectorRegistry) -> PrometheusMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets["batchdiff_request_duration_seconds"] = [
            .microseconds(500), .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500),
            .seconds(5), .seconds(10), .seconds(30), .seconds(60),
        ]
        return factory
    }

    /// Answers a request with `answer`, run as a task off the server's threads, in `encoding`.
    private func answeredLater(
        _ encoding: ResponseEncoding, _ answer: @escaping @Sendable (BatchDiffService) async throws(Problem) -> HTTPResponse
    ) -> HTTPReply {
        .later { [self] pending in
            let task = Task {
                let response: HTTPResponse
                do {
                    response = try await answer(self)
                } catch {
                    response = error.response
                }
                pending.send(await encoding.encodedOffThread(response))
            }
            // A client gone away needs no answer: its long poll stops waiting.
            pending.whenAbandoned { task.cancel() }
        }
    }

    /// What one request body byte may cost while its request is in flight, for the server's
    /// request memory: the body, the collections read from it as it is parsed and the
    /// differ's state, and the answer. Measured with a release build (`make
    /// bench-request-memory`): a 28 MB `POST /diff` of 7,000,000 zeros a side (24 bytes of
    /// items per 2-byte item, lists or sections) grows peak memory by 15x its size, 100,000
    /// objects with 5% changed by 1.4x; the worst body known, 3,500,000 zeros against as many
    /// ones, by 27x (an identity table for millions of rows, and an answer of 4x the body
    /// listing every index). The factor stays above the worst.
    package static let memoryPerBodyByte = 40

    /// Requests with bodies this large are answered off the server's threads, which stay
    /// free for the quick requests of everyone else.
    private static let offloadedBodySize = 256 << 10

    /// A body is JSON: `application/json`, a `+json` type, or no type at all.
    static func checkContentType(_ request: HTTPRequest) throws(Problem) {
        guard let contentType = request.header("content-type") else { return }
        let type = mediaType(contentType)
        guard type == "application/json" || type.hasSuffix("+json") else {
            throw Problem.unsupportedMediaType(contentType)
        }
    }

    /// A `PATCH`'s ops are `application/json` (or untyped); another type, the JSON Patch
    /// and merge patch ones included, is a 415 that names the ops format.
    static func checkOpsContentType(_ request: HTTPRequest) throws(Problem) {
        guard let contentType = request.header("content-type"), mediaType(contentType) != "application/json" else { return }
        throw Problem.unsupportedPatchFormat(contentType)
    }

    /// The body as a JSON document whose collections at `collections` are read with the
    /// identity member `idKey` as it is parsed (its content type is checked by ``endpoint(of:_:)``).
    static func readJSON(_ request: HTTPRequest, collections: CollectionPlacement, idKey: String) throws(Problem) -> JSONDocument {
        do {
            return try JSONDocument(bytes: request.body, collections: collections, idKey: idKey, refusingRepeatedMembers: true)
        } catch {
            throw Problem.malformedJSON(error)
        }
    }
}

extension HTTPResponse {
    static func json(_ status: Int, _ body: [UInt8], headers: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: body)
    }

    /// A JSON answer many clients receive, of its media type: its text, and its gzip form
    /// made once, kept with it and shared.
    static func json(_ status: Int, shared answer: SharedAnswer, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        var response = HTTPResponse(status: status, headers: [("Content-Type", answer.mediaType.name)] + headers, body: answer.bytes)
        response.gzippedBody = { answer.memo(.gzip) }
        return response
    }
}

extension Error {
    /// This error as a response: its problem document, or a 500 for anything unforeseen.
    var response: HTTPResponse {
        (self as? Problem ?? Problem.internalError("\(self)")).response
    }
}
