import Synchronization

/// The answer to a parked request, given once, from any thread.
///
/// Sending resumes the suspended connection; the server then writes the response from its
/// own thread. Sends after the first are ignored.
public final class PendingResponse: Sendable {
    private let state = Mutex<(response: HTTPResponse?, sent: Bool)>((nil, false))
    private let resume: @Sendable () -> Void

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

    /// The response, once sent.
    var response: HTTPResponse? { state.withLock { $0.response } }
}
