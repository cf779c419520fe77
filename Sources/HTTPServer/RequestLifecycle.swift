import Synchronization

/// The life of a request on the Swift side: the body read within the limit, the request
/// handed to the handler as an ``HTTPRequest``, a long poll parked, what must be refused
/// refused, and every finished exchange reported. libmicrohttpd calls it through ``Daemon``.
final class RequestLifecycle: Sendable {
    let handler: @Sendable (HTTPRequest) -> HTTPReply
    let refusal: @Sendable (HTTPServerRefusal) -> HTTPResponse
    let observer: @Sendable (HTTPExchange) -> Void
    let bodyLimit: Int
    private let draining = Atomic<Bool>(false)
    private let inFlight = Atomic<Int>(0)
    /// Requests parked and not completed yet, so that none outlives the daemon.
    private let parked = Mutex<[ObjectIdentifier: PendingResponse]>([:])

    init(
        bodyLimit: Int, handler: @escaping @Sendable (HTTPRequest) -> HTTPReply,
        refusal: @escaping @Sendable (HTTPServerRefusal) -> HTTPResponse, observer: @escaping @Sendable (HTTPExchange) -> Void
    ) {
        self.bodyLimit = bodyLimit
        self.handler = handler
        self.refusal = refusal
        self.observer = observer
    }

    /// Requests begun and not completed yet (parked ones included).
    var requestsInFlight: Int { inFlight.load(ordering: .acquiring) }

    /// From now on, every new request is refused with 503.
    func startDraining() { draining.store(true, ordering: .releasing) }

    var isDraining: Bool { draining.load(ordering: .acquiring) }

    func begin(_ state: RequestState, connection: Connection, contentLength: Int?) {
        inFlight.add(1, ordering: .relaxed)
        if isDraining {
            answer(state, with: refusal(.shuttingDown), on: connection, close: true)
        } else if let contentLength, contentLength > bodyLimit {
            answer(state, with: refusal(.bodyTooLarge(limit: bodyLimit)), on: connection, close: true)
        }
    }

    /// What to do with the next piece of a body.
    enum BodyPiece {
        /// Keep it: the body is within the limit.
        case keep
        /// Drop it: the body is refused (413 when it ends) or already answered.
        case drop
        /// Close the connection: the body runs on far past the limit.
        case close
    }

    /// Decides about the next `count` bytes of `state`'s body.
    func receive(_ count: Int, for state: RequestState) -> BodyPiece {
        state.bytesIn += count
        guard !state.answered else { return .drop }
        guard !state.tooLarge && state.body.count + count <= bodyLimit else {
            // libmicrohttpd takes no answer in the middle of an upload: the 413 goes out when
            // the body ends, and a body that runs on far past the limit closes the connection.
            state.tooLarge = true
            state.body = []
            return state.bytesIn <= 2 * bodyLimit + (1 << 20) ? .drop : .close
        }
        return .keep
    }

    func finish(_ state: RequestState, connection: Connection) {
        if let pending = state.pending {
            if let response = pending.response { answer(state, with: response, on: connection, close: isDraining) }
            return
        }
        guard !state.answered else { return }
        guard !state.tooLarge else {
            return answer(state, with: refusal(.bodyTooLarge(limit: bodyLimit)), on: connection, close: true)
        }
        let request = HTTPRequest(
            method: state.method, path: state.path,
            headers: connection.headers(),
            query: connection.queryArguments(),
            body: state.body
        )
        state.body = []
        switch handler(request) {
        case .now(let response):
            answer(state, with: response, on: connection, close: isDraining)
        case .later where isDraining:
            answer(state, with: refusal(.shuttingDown), on: connection, close: true)
        case .later(let park):
            let pending = PendingResponse(resume: connection.resume)
            state.pending = pending
            parked.withLock { $0[ObjectIdentifier(pending)] = pending }
            connection.suspend()
            park(pending)
        }
    }

    private func answer(_ state: RequestState, with response: HTTPResponse, on connection: Connection, close: Bool) {
        state.answered = true
        state.status = response.status
        state.bytesOut = response.body.count
        connection.queue(response, close: close)
    }

    /// Answers every request still parked with `response` (a parked connection must be
    /// resumed before the daemon stops).
    func answerParked(with response: HTTPResponse) {
        for pending in parked.withLock({ Array($0.values) }) { pending.send(response) }
    }

    func complete(_ state: RequestState) {
        if let pending = state.pending { parked.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(pending)) } }
        inFlight.subtract(1, ordering: .relaxed)
        let elapsed = ContinuousClock.now - state.started
        observer(HTTPExchange(
            method: state.method, path: state.path, status: state.answered ? state.status : 0,
            seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
            bytesIn: state.bytesIn, bytesOut: state.bytesOut
        ))
    }
}
