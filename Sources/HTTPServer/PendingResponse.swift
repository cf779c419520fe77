import Synchronization

/// The answer to a parked request, given once, from any thread: a whole response, or the
/// head of one whose body is streamed (``stream(_:)``).
///
/// Sending resumes the suspended connection; the server then writes the response from its
/// own thread. Sends after the first are ignored.
public final class PendingResponse: Sendable {
    /// What the request is answered with: a response, or a head and its streamed body.
    enum Answer {
        case whole(HTTPResponse)
        case streamed(head: HTTPResponse, body: ResponseStream)
    }

    private let state = Mutex<Answer?>(nil)
    private let resume: @Sendable () -> Void
    /// What the service does when the client goes away; `abandoned` once it has.
    private let abandonment = Mutex<(handlers: [@Sendable () -> Void], abandoned: Bool)>(([], false))

    init(resume: @escaping @Sendable () -> Void) {
        self.resume = resume
    }

    /// Answers the parked request with `response`. Returns whether this was the first answer.
    @discardableResult
    public func send(_ response: HTTPResponse) -> Bool {
        answer(.whole(response))
    }

    /// Answers the parked request with `head` (its status and headers; its body is
    /// ignored), then a body written through the returned stream as it comes; `nil` when
    /// the request was answered already (its client went away, or the server shuts down).
    public func stream(_ head: HTTPResponse) -> ResponseStream? {
        let body = ResponseStream()
        guard answer(.streamed(head: head, body: body)) else { return nil }
        // Once the stream has ended, nothing more is written to it.
        body.onClose { [weak self] in self?.stopWork() }
        return body
    }

    private func answer(_ answer: Answer) -> Bool {
        let first = state.withLock { state in
            guard case .none = state else { return false }
            state = answer
            return true
        }
        if first { resume() }
        return first
    }

    /// Calls `handler` when the work for the answer can stop: the client went away before it
    /// was answered (its connection hung up while parked), or the streamed answer ended
    /// (``stream(_:)``). At once if that has happened already.
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
        send(HTTPResponse(status: 499))
        stopWork()
    }

    /// The answer needs no more work: the ``whenAbandoned(_:)`` handlers run, once.
    private func stopWork() {
        let handlers = abandonment.withLock { abandonment in
            abandonment.abandoned = true
            defer { abandonment.handlers = [] }
            return abandonment.handlers
        }
        for handler in handlers { handler() }
    }

    /// The answer, once given.
    var answer: Answer? { state.withLock { $0 } }
}
