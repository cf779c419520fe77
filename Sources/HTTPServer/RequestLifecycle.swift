import Gzip
import Metrics
import Synchronization

/// The life of a request on the Swift side: the body read within the limit, the request
/// handed to the handler as an ``HTTPRequest``, a long poll parked, what must be refused
/// refused, and every finished exchange reported. libmicrohttpd calls it through ``Daemon``.
final class RequestLifecycle: Sendable {
    let admit: @Sendable (HTTPRequest) -> HTTPAdmission
    let refusal: @Sendable (HTTPServerRefusal) -> HTTPResponse
    let observer: @Sendable (HTTPExchange) -> Void
    let bodyLimit: Int
    /// Seconds a connection has for a request's headers, and then for its body.
    let headerTimeout: Int
    let bodyTimeout: Int
    /// The accept gate and the deadlines of the daemon's connections.
    let connections: ConnectionGuard
    /// The memory requests in flight may use for their bodies.
    let memory: RequestMemoryBudget
    /// Which other origins' pages may read the answers.
    let crossOrigin: CrossOrigin
    /// What a connection let in past the limit may ask for (health checks).
    let probePaths: Set<String>
    private let draining = Atomic<Bool>(false)
    private let inFlight = Atomic<Int>(0)
    /// Requests parked and streams open, not completed yet, so that none outlives the
    /// daemon; closed (no more parking) once they are all answered at the end of shutdown.
    private let parked = Mutex<Parked>(Parked())
    /// `batchdiff_connections_parked`: connections suspended until their answer is ready.
    private let parkedGauge = Gauge(label: "batchdiff_connections_parked")

    /// `batchdiff_event_streams`: responses streamed now (``ResponseStream``).
    private let streamsGauge = Gauge(label: "batchdiff_event_streams")

    /// `batchdiff_connection_limit`: the connections served at once in force (what
    /// `--max-connections` asked, or less when the open-files limit does not allow it).
    private let connectionLimitGauge = Gauge(label: "batchdiff_connection_limit")

    private struct Parked {
        var pending: [ObjectIdentifier: PendingResponse] = [:]
        var streams: [ObjectIdentifier: ResponseStream] = [:]
        var closed = false
        var streamsEnded = false
    }

    init(
        _ configuration: HTTPServerConfiguration,
        admit: @escaping @Sendable (HTTPRequest) -> HTTPAdmission,
        refusal: @escaping @Sendable (HTTPServerRefusal) -> HTTPResponse, observer: @escaping @Sendable (HTTPExchange) -> Void
    ) {
        bodyLimit = configuration.bodyLimit
        headerTimeout = configuration.headerTimeout
        bodyTimeout = configuration.bodyTimeout
        connections = ConnectionGuard(
            limit: configuration.connectionLimit, headerTimeout: configuration.headerTimeout, minSendRate: configuration.minSendRate,
            probeConnections: configuration.probePaths.isEmpty ? 0 : HTTPServerConfiguration.probeConnections
        )
        memory = RequestMemoryBudget(limit: configuration.requestMemory, bytesPerBodyByte: configuration.memoryPerBodyByte)
        crossOrigin = configuration.crossOrigin
        probePaths = configuration.probePaths
        connectionLimitGauge.record(configuration.connectionLimit)
        self.admit = admit
        self.refusal = refusal
        self.observer = observer
    }

    /// Requests begun and not completed yet (parked ones included).
    var requestsInFlight: Int { inFlight.load(ordering: .acquiring) }

    /// From now on, every new request is refused with 503; requests already begun are
    /// served.
    func startDraining() { draining.store(true, ordering: .releasing) }

    var isDraining: Bool { draining.load(ordering: .acquiring) }

    /// Starts a request whose headers are in: refuses it at once when the server is
    /// draining, when its `Content-Length` is over the limit, or when the service refuses
    /// a request that announces a body, so that body is never read; otherwise keeps the
    /// service's decision for ``finish(_:connection:)``.
    func begin(_ state: RequestState, connection: Connection) {
        inFlight.add(1, ordering: .relaxed)
        connection.setDeadline(seconds: bodyTimeout)
        state.headers = connection.headers()
        if isDraining {
            return answer(state, with: refusal(.shuttingDown), on: connection, close: true)
        }
        if connection.isForProbesOnly && !probePaths.contains(state.path) {
            return answer(state, with: refusal(.busy(retryAfter: Self.busyRetryAfter)), on: connection, close: true)
        }
        state.query = connection.queryArguments()
        state.clientAddress = connection.clientAddress()
        // Repeated lines of one header are joined with ", ": two lengths, or one list of them.
        if let length = state.headers["content-length"], length.isEmpty || !length.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            return answer(state, with: refusal(.ambiguousFraming("Content-Length: expected one decimal length, not \(length.prefix(60).debugDescription)")), on: connection, close: true)
        }
        let contentLength = state.headers["content-length"].flatMap { Int($0) }
        if let contentLength, contentLength > bodyLimit {
            return answer(state, with: refusal(.bodyTooLarge(limit: bodyLimit)), on: connection, close: true)
        }
        let admission = admit(HTTPRequest(method: state.method, path: state.path, headers: state.headers, query: state.query, clientAddress: state.clientAddress))
        if case .refused(let response, _) = admission, (contentLength ?? 0) > 0 || state.headers["transfer-encoding"] != nil {
            return answer(state, with: response, on: connection, close: true)
        }
        // A gzip body is inflated as it arrives, the limit and the memory counted inflated
        // (for a request the service accepts: a refusal is answered first).
        if case .accepted = admission {
            switch state.headers["content-encoding"]?.lowercased().trimmingCharacters(in: .whitespaces) {
            case nil, "", "identity": break
            case "gzip", "x-gzip": state.inflater = GzipInflater()
            case let other?:
                let announcesBody = (contentLength ?? 0) > 0 || state.headers["transfer-encoding"] != nil
                return answer(state, with: refusal(.unsupportedContentEncoding(other)), on: connection, close: announcesBody)
            }
        }
        // A body announced is reserved whole before it is read; one sent in chunks as it
        // grows. One that does not fit is read and dropped, then refused: a client sending
        // its body before it reads an answer gets the 503, not a reset.
        if case .accepted = admission, let contentLength, contentLength > 0 {
            if let reserved = memory.reserve(bodyBytes: contentLength, held: 0) {
                state.reservedBodyBytes = contentLength
                state.reservedMemory = reserved
                // Read into room of its size: no copies as it grows, no room to spare after.
                if state.inflater == nil { state.body.reserveCapacity(contentLength) }
            } else {
                state.busy = true
            }
        }
        state.admission = admission
    }

    /// Takes the next piece of `state`'s body: keeps it (inflated, for a gzip body) while
    /// the body is within the limit and its memory is reserved, else drops it. Returns
    /// false when the connection is to be closed: the body runs on far past the limit.
    func receive(_ piece: UnsafeRawBufferPointer, for state: RequestState) -> Bool {
        state.bytesIn += piece.count
        guard !state.answered, !state.tooLarge, !state.busy, state.undecodable == nil else {
            // libmicrohttpd takes no answer in the middle of an upload: the refusal goes out
            // when the body ends, and a body that runs on far past the limit closes the connection.
            return state.bytesIn <= 2 * bodyLimit + (1 << 20)
        }
        if let inflater = state.inflater {
            // The compressed bytes are capped too: a gzip header that never ends inflates to nothing.
            guard state.bytesIn <= bodyLimit else { return drop(state) { $0.tooLarge = true } }
            do throws(GzipError) {
                // Memory is reserved before each inflated piece is kept.
                try inflater.inflate(piece, into: &state.body, limit: bodyLimit) { reserve(bodyBytes: $0, for: state) }
            } catch {
                switch error {
                case .tooLarge: return drop(state) { $0.tooLarge = true }
                case .noRoom: return drop(state) { $0.busy = true }
                case .corrupt(let reason): return drop(state) { $0.undecodable = "the gzip body cannot be inflated: \(reason)" }
                }
            }
        } else {
            guard state.body.count + piece.count <= bodyLimit else { return drop(state) { $0.tooLarge = true } }
            guard reserve(bodyBytes: state.body.count + piece.count, for: state) else { return drop(state) { $0.busy = true } }
            state.body.append(contentsOf: piece)
        }
        return true
    }

    /// Reserves the memory of a body of `bodyBytes` bytes for `state` (a megabyte at a time,
    /// not piece by piece); false when it does not fit beside the requests in flight.
    private func reserve(bodyBytes: Int, for state: RequestState) -> Bool {
        let needed = bodyBytes - state.reservedBodyBytes
        guard needed > 0 else { return true }
        let more = min(max(needed, 1 << 20), bodyLimit - state.reservedBodyBytes)
        guard let reserved = memory.reserve(bodyBytes: more, held: state.reservedMemory) else { return false }
        state.reservedBodyBytes += more
        state.reservedMemory += reserved
        return true
    }

    /// Drops `state`'s body, marking why; the rest of it is read and dropped.
    private func drop(_ state: RequestState, because mark: (RequestState) -> Void) -> Bool {
        mark(state)
        state.body = []
        return state.bytesIn <= 2 * bodyLimit + (1 << 20)
    }

    /// Seconds a client refused for want of request memory is asked to wait.
    static let busyRetryAfter = 1

    func finish(_ state: RequestState, connection: Connection) {
        connection.setDeadline(seconds: 0)
        if let pending = state.pending {
            switch pending.answer {
            case .whole(let response)?: answer(state, with: response, on: connection, close: isDraining)
            case .streamed(let head, let body)?: answer(state, with: head, streaming: body, on: connection)
            case nil: break
            }
            return
        }
        guard !state.answered else { return }
        guard !state.tooLarge else {
            return answer(state, with: refusal(.bodyTooLarge(limit: bodyLimit)), on: connection, close: true)
        }
        guard !state.busy else {
            return answer(state, with: refusal(.busy(retryAfter: Self.busyRetryAfter)), on: connection, close: isDraining)
        }
        if state.undecodable == nil, let inflater = state.inflater, !inflater.isAtEnd, state.bytesIn > 0 {
            state.undecodable = "the gzip body is cut short"
        }
        if let reason = state.undecodable {
            return answer(state, with: refusal(.undecodableBody(reason)), on: connection, close: isDraining)
        }
        guard case .accepted(_, let respond) = state.admission else {
            if case .refused(let response, _) = state.admission { answer(state, with: response, on: connection, close: isDraining) }
            return
        }
        let request = HTTPRequest(
            method: state.method, path: state.path,
            headers: state.headers,
            query: state.query,
            body: state.body,
            clientAddress: state.clientAddress
        )
        state.body = []
        switch respond(request) {
        case .now(let response):
            answer(state, with: response, on: connection, close: isDraining)
        case .later(let park):
            let pending = PendingResponse(resume: connection.resume)
            let admitted = parked.withLock { parked in
                guard !parked.closed else { return false }
                parked.pending[ObjectIdentifier(pending)] = pending
                parkedGauge.record(parked.pending.count)
                return true
            }
            guard admitted else { return answer(state, with: refusal(.shuttingDown), on: connection, close: true) }
            state.pending = pending
            connection.suspend()
            connection.watchForHangUp { pending.abandon() }
            park(pending)
        }
    }

    /// Answers with `head`, then `body` as it is written; the connection closes after it.
    /// A stream stays open until its writer finishes it, its client goes away (watched as
    /// a parked connection's is) or the server shuts down (``answerParked(with:)``).
    private func answer(_ state: RequestState, with head: HTTPResponse, streaming body: ResponseStream, on connection: Connection) {
        // From a parked request to a stream: counted as one, not the other.
        let admitted = parked.withLock { parked in
            if let pending = state.pending, parked.pending.removeValue(forKey: ObjectIdentifier(pending)) != nil {
                parkedGauge.record(parked.pending.count)
            }
            parked.streams[ObjectIdentifier(body)] = body
            streamsGauge.record(parked.streams.count)
            return !parked.streamsEnded
        }
        state.answered = true
        state.status = head.status
        state.stream = body
        body.attach(suspend: connection.suspend, resume: connection.resume)
        connection.watchForHangUp { body.abandon() }
        connection.queue(withCrossOriginHeaders(head, for: state), streaming: body)
        if !admitted { body.finish() }
    }

    private func answer(_ state: RequestState, with response: HTTPResponse, on connection: Connection, close: Bool) {
        state.answered = true
        state.status = response.status
        state.bytesOut = response.body.count
        connection.queue(withCrossOriginHeaders(response, for: state), close: close)
    }

    private func withCrossOriginHeaders(_ response: HTTPResponse, for state: RequestState) -> HTTPResponse {
        guard !crossOrigin.origins.isEmpty else { return response }
        let added = crossOrigin.headers(forOrigin: state.headers["origin"])
        guard !added.isEmpty else { return response }
        var response = response
        response.headers += added
        return response
    }

    /// Ends every stream once what was written is sent; later streams end as soon as they
    /// open (at shutdown: a stream has no last answer to wait for).
    func endStreams() {
        let streams = parked.withLock { parked in
            parked.streamsEnded = true
            return Array(parked.streams.values)
        }
        for stream in streams { stream.finish() }
    }

    /// Answers every request still parked with `response`, and refuses later ones (a
    /// parked connection must be resumed before the daemon stops).
    func answerParked(with response: HTTPResponse) {
        let pending = parked.withLock { parked in
            parked.closed = true
            return Array(parked.pending.values)
        }
        for request in pending { request.send(response) }
    }

    func complete(_ state: RequestState) {
        if state.pending != nil || state.stream != nil {
            parked.withLock { parked in
                if let pending = state.pending {
                    parked.pending.removeValue(forKey: ObjectIdentifier(pending))
                    parkedGauge.record(parked.pending.count)
                }
                if let stream = state.stream {
                    state.bytesOut = stream.bytesSent
                    parked.streams.removeValue(forKey: ObjectIdentifier(stream))
                    streamsGauge.record(parked.streams.count)
                }
            }
        }
        // A stream answered but never sent (its connection closed first) ends here: its
        // writer learns it.
        if state.stream == nil, case .streamed(_, let body)? = state.pending?.answer { body.close() }
        inFlight.subtract(1, ordering: .relaxed)
        memory.release(state.reservedMemory)
        observer(HTTPExchange(
            method: state.method, path: state.path, route: state.admission?.route, status: state.answered ? state.status : 0,
            nanoseconds: MonotonicTime.nanoseconds() - state.started,
            bytesIn: state.bytesIn, bytesOut: state.bytesOut
        ))
    }
}
