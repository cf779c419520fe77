import Dispatch
import Foundation

/// HTTP/1.1 over a plain TCP connection, without Foundation's networking: for the
/// `batchdiff` binary and servers that must not link libcurl. One connection per request
/// (`Connection: close`); `http://` URLs only (put TLS in a proxy in front). It asks for
/// gzip (`Accept-Encoding`) and inflates what comes so.
///
/// The socket's blocking calls run on a Dispatch queue, never on the caller's thread;
/// cancelling the calling task aborts the exchange.
public struct SocketTransport: HTTPTransport {
    /// The largest response body accepted.
    public var maxBodyBytes: Int

    public init(maxBodyBytes: Int = 1 << 30) {
        self.maxBodyBytes = maxBodyBytes
    }

    public func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        let target = try RequestTarget(url: request.url)
        let deadline = DispatchTime.now() + request.timeout
        let connection = SocketBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async { [maxBodyBytes] in
                    continuation.resume(with: Result { () throws(TransportError) -> HTTPClientResponse in
                        let socket = Socket()
                        guard connection.hold(socket) else { throw TransportError("cancelled") }
                        try socket.connect(host: target.host, port: target.port, deadline: deadline)
                        try socket.send(try target.head(of: request) + request.body, deadline: deadline)
                        var reader = ResponseReader(socket: socket, deadline: deadline, maxBodyBytes: maxBodyBytes)
                        return try reader.response(toMethod: request.method)
                    })
                }
            }
        } onCancel: {
            connection.abort()
        }
    }
}

/// The socket of one exchange, for a cancellation that may come before it exists.
private final class SocketBox: @unchecked Sendable {  // its state is read and written under `lock`
    private let lock = NSLock()
    private var socket: Socket?
    private var aborted = false

    /// Keeps `socket`; false when the exchange was cancelled already.
    func hold(_ socket: Socket) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        self.socket = socket
        return !aborted
    }

    func abort() {
        lock.lock()
        aborted = true
        let socket = self.socket
        lock.unlock()
        socket?.abort()
    }
}

/// Where a request goes: host, port, and the path with its query.
struct RequestTarget {
    var host: String
    var port: UInt16
    var pathAndQuery: String

    init(url: String) throws(TransportError) {
        guard url.hasPrefix("http://") else { throw TransportError("only http:// URLs are supported, not \(url)", isRetryable: false) }
        let rest = url.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        let path = rest.dropFirst(authority.count)
        pathAndQuery = path.isEmpty ? "/" : (path.first == "?" ? "/" + path : String(path))
        // `[::1]:8080`, `host:8080`, `host`.
        var hostPart = Substring(authority)
        var portPart: Substring?
        if hostPart.hasPrefix("["), let close = hostPart.firstIndex(of: "]") {
            let after = hostPart[hostPart.index(after: close)...]
            if after.hasPrefix(":") { portPart = after.dropFirst() }
            hostPart = hostPart[hostPart.index(after: hostPart.startIndex)..<close]
        } else if let colon = hostPart.lastIndex(of: ":") {
            portPart = hostPart[hostPart.index(after: colon)...]
            hostPart = hostPart[..<colon]
        }
        guard !hostPart.isEmpty else { throw TransportError("no host in \(url)", isRetryable: false) }
        host = String(hostPart)
        if let portPart {
            guard let port = UInt16(portPart), port > 0 else { throw TransportError("bad port in \(url)", isRetryable: false) }
            self.port = port
        } else {
            port = 80
        }
    }

    /// The request line and headers of `request`, ending with the empty line. Throws on a
    /// header that would break the framing (a line break in a name or value).
    func head(of request: HTTPClientRequest) throws(TransportError) -> [UInt8] {
        for (name, value) in request.headers where (name + value).contains(where: { $0 == "\r" || $0 == "\n" }) {
            throw TransportError("the header \(name) holds a line break", isRetryable: false)
        }
        let hostHeader = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        var head = "\(request.method) \(pathAndQuery) HTTP/1.1\r\nHost: \(hostHeader)\r\nConnection: close\r\nAccept-Encoding: gzip\r\n"
        for (name, value) in request.headers { head += "\(name): \(value)\r\n" }
        if !request.body.isEmpty || request.method == "PUT" || request.method == "POST" {
            head += "Content-Length: \(request.body.count)\r\n"
        }
        head += "\r\n"
        return Array(head.utf8)
    }
}
