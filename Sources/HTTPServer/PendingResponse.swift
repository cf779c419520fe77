import Synchronization

/// The answer to a parked request, given once, from any thread.
///
/// Sending resumes the suspended connection; the server then writes the response from its
/// own thread. Sends after the first are ignored.
public final class PendingResponse: Sendable {
    private let state = Mutex<(response: HTTPResponse?, sent: Bool)>((nil, false))
    private let resume: @Sendable () -> Void
    /// What the service does when the client goes away; `abandoned` once it has.
    private let abandonment = Mutex<(handlers: [@Sendable () -> Void], abandoned: Bool)>(([], false))

    init(resume: @escaping @Sendable () -> Void) {
        self.resume = resume
    }

    /// Answers the parked request with `response`. Returns whether this was the first answer.
    @discardableResult
    public func send(_ response: HTTPResponse) -> Bool {
        let first = state.withLock { state in
            guard !state.sent else { return false }
            state = (response, true)
            return true
        }
        if first { resume() }
        return first
    }

    /// Calls `handler` if the client goes away before it is answered (its connection hung
    /// up while parked), at once if it already has: the work for the answer can stop.
    public func whenAbandoned(_ handler: @escaping @Sendable () -> Void) {
        let abandoned = abandonment.withLock { abandonment in
            if !abandonment.abandoned { abandonment.handlers.append(handler) }
            return abandonment.abandoned
        }
        if abandoned { handler() }
    }

    /// The client went away: the request ends now, with status 499 ("client closed request",
    /// as nginx logs it) and nothing to send, and the service is told.
    func abandon() {
        let handlers = abandonment.withLock { abandonment in
            abandonment.abandoned = true
            defer { abandonment.handlers = [] }
            return abandonment.handlers
        }
        send(HTTPResponse(status: 499))
        for handler in handlers { handler() }
    }

    /// The response, once sent.
    var response: HTTPResponse? { state.withLock { $0.response } }
}
