import HTTPServer

/// One row of the endpoint table: the methods and path a route answers, the token it
/// needs, the body it reads, and what answers it.
struct Endpoint: Sendable {
    /// Who may call an endpoint (docs/security.md; docs/errors.md: 401 and 403).
    enum Access: Sendable {
        /// Anyone: health and metrics.
        case open
        /// The read token, when one is configured (the write token also reads), or a signed
        /// token with read scope naming the feed, when keys are configured.
        case read
        /// The write token, or the read token when only that one is configured, or a signed
        /// token with write scope naming the feed, when keys are configured.
        case write
    }

    /// The body an endpoint reads.
    enum Body: Sendable {
        case none
        /// JSON (`application/json`, a `+json` type, or no type at all; else 415).
        case json
        /// A feed's ops (`application/json`, or no type at all; else 415, whose detail names
        /// the ops format: JSON Patch and merge patches are other formats).
        case ops
    }

    /// How an endpoint is answered.
    enum Answer: Sendable {
        /// At once, on the server's thread: quick work only.
        case now(@Sendable (BatchDiffService, HTTPRequest, Admitted) throws(Problem) -> HTTPResponse)
        /// CPU work: at once for a small body, on a worker off the server's threads for a large one.
        case computed(@Sendable (BatchDiffService, HTTPRequest) throws(Problem) -> HTTPResponse)
        /// By a task off the server's threads (the feed core's calls may wait for the store).
        case task(@Sendable (BatchDiffService, HTTPRequest, Admitted) async throws(Problem) -> HTTPResponse)
        /// As `task`, but a request that asks for an event stream
        /// (``BatchDiffService/asksForEvents(_:)``) is answered by `events` through its
        /// pending response, by a task of its own.
        case taskOrEvents(
            task: @Sendable (BatchDiffService, HTTPRequest, Admitted) async throws(Problem) -> HTTPResponse,
            events: @Sendable (BatchDiffService, HTTPRequest, Admitted, PendingResponse) async -> Void
        )
    }

    let methods: [String]
    let path: PathPattern
    let access: Access
    let body: Body
    let answer: Answer

    init(_ methods: [String], _ path: String, access: Access, body: Body = .none, answer: Answer) {
        self.methods = methods
        self.path = PathPattern(path)
        self.access = access
        self.body = body
        self.answer = answer
    }
}
