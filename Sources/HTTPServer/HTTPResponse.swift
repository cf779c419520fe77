/// An HTTP response as plain Swift values.
public struct HTTPResponse: Sendable {
    public var status: Int
    /// Headers in order; `Content-Length` is added by the server.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// The body gzip-compressed, for an answer many clients receive: made once and shared,
    /// where the answer's encoder would otherwise compress the body again for each. The
    /// server itself sends `body` as it is.
    public var gzippedBody: (@Sendable () -> [UInt8])?

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// What a handler makes of a request: an answer now, or later (a long poll).
public enum HTTPReply: Sendable {
    /// Answer at once.
    case now(HTTPResponse)
    /// Park the request without holding a thread; `park` receives the ``PendingResponse``
    /// to answer through, from any thread, whenever the answer is ready.
    case later(park: @Sendable (PendingResponse) -> Void)
}

/// What a service decides about a request from its head (method, path, headers, query),
/// before its body is read.
public enum HTTPAdmission: Sendable {
    /// Answer with this response. The body, if one is announced, is never read: no
    /// `100 Continue`, and the connection closes after the answer. `route` names what the
    /// request asked for, for metrics (``HTTPExchange/route``).
    case refused(HTTPResponse, route: String)
    /// Read the body, then answer the whole request with `respond`.
    case accepted(route: String, respond: @Sendable (HTTPRequest) -> HTTPReply)

    /// The service's name for what the request asked for.
    var route: String {
        switch self {
        case .refused(_, let route), .accepted(let route, _): route
        }
    }
}

/// Why the server answered a request by itself, without the service.
public enum HTTPServerRefusal: Sendable {
    /// The body passed the size limit (`Content-Length` or bytes read).
    case bodyTooLarge(limit: Int)
    /// The server is shutting down.
    case shuttingDown
    /// The requests in flight use the memory their bodies may have
    /// (``HTTPServerConfiguration/requestMemory``); retry after `retryAfter` seconds.
    case busy(retryAfter: Int)
    /// The request's framing is ambiguous (`Content-Length` repeated, or not a number):
    /// read another way by a proxy in front, it could smuggle a request. The reason.
    case ambiguousFraming(String)
    /// The body comes in a `Content-Encoding` other than gzip.
    case unsupportedContentEncoding(String)
    /// The gzip body cannot be inflated (damaged, or cut short); the reason.
    case undecodableBody(String)
}

/// One finished request, for logs and metrics.
public struct HTTPExchange: Sendable {
    public var method: String
    public var path: String
    /// The service's name for the request's route, from its admission; `nil` when the
    /// server answered before admitting it.
    public var route: String?
    public var status: Int
    /// From the request's headers in to its answer sent (or its connection gone).
    public var nanoseconds: Int
    public var bytesIn: Int
    public var bytesOut: Int
}
