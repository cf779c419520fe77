import Foundation

/// How the client speaks HTTP: `URLSession` in apps (BatchDiffURLSession), or
/// ``SocketTransport`` where Foundation's networking is not wanted.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the whole response, whatever its status. Throws when no
    /// response came (connection refused or lost, the timeout passed); honours task
    /// cancellation.
    func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse
}

/// A request the client sends.
public struct HTTPClientRequest: Sendable {
    public var method: String
    /// An absolute `http://` URL.
    public var url: String
    /// Headers besides `Host`, `Content-Length` and `Connection`, which transports add.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// How long the whole exchange may take, in seconds.
    public var timeout: TimeInterval

    public init(method: String, url: String, headers: [(name: String, value: String)] = [], body: [UInt8] = [], timeout: TimeInterval) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

/// A response as a transport received it; the body is decoded (`Content-Encoding` undone).
public struct HTTPClientResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of header `name`, in any case.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// Why a transport got no response.
public struct TransportError: Error, Sendable, CustomStringConvertible {
    public var description: String
    /// Whether trying again may succeed (a network error) or never will (a bad URL or
    /// header, an answer that cannot be read or is too large).
    public var isRetryable: Bool

    public init(_ description: String, isRetryable: Bool = true) {
        self.description = description
        self.isRetryable = isRetryable
    }
}
