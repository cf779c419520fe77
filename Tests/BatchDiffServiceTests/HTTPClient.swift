import Gzip
import Foundation
import Glibc

/// An HTTP response as read off the wire.
struct HTTPResult {
    var status: Int
    /// Headers in order, names as sent.
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    /// The first value of header `name`, any case.
    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed with JSONSerialization (fragments allowed); nil when it is not JSON.
    var json: Any? { try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]) }

    /// The body as a JSON object; empty when it is not one.
    var object: [String: Any] { json as? [String: Any] ?? [:] }
}

struct HTTPClientError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// One TCP connection to the server, with blocking, time-bounded reads and writes: enough
/// HTTP/1.1 to send any bytes (hostile ones included) and read a whole response.
final class HTTPConnection {
    private(set) var fd: Int32
    /// Bytes received and not yet consumed by a response.
    private var pending: [UInt8] = []

    /// Connects to 127.0.0.1:`port` (within `timeout` seconds); with `receiveBuffer`, the
    /// socket receives into that many bytes at most (a slow reader's small window).
    init(port: UInt16, timeout: Double = 5, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HTTPClientError("socket: errno \(errno)") }
        if var receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receiveBuffer, socklen_t(MemoryLayout<Int32>.size)) }
        var noDelay: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            fd = -1
            throw HTTPClientError(code == ECONNREFUSED ? "connection refused" : "connect: errno \(code)")
        }
    }

    deinit { close() }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// Sends all of `bytes`; throws when the peer closed or the send timed out.
    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno == EINTR { continue }
                throw HTTPClientError("send: errno \(errno)")
            }
            offset += sent
        }
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Drops the connection with a reset, as a client losing its network looks to a server
    /// that next writes to it.
    func reset() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close()
    }

    /// Half-closes the connection: the server sees the end of the request stream.
    func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// Receives up to `count` bytes within `timeout` seconds: bytes, or [] at end of stream
    /// (bytes received before and not consumed are ignored). Throws on timeout or a
    /// connection error (e.g. reset).
    func receive(upTo count: Int, timeout: Double) throws -> [UInt8] {
        try receive(deadline: Date().addingTimeInterval(timeout), upTo: count)
    }

    /// Receives what is available within `timeout` seconds: bytes, or [] at end of stream.
    /// Throws on timeout or a connection error (e.g. reset).
    private func receive(deadline: Date, upTo limit: Int = 65536) throws -> [UInt8] {
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw HTTPClientError("timed out waiting for the server") }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(max(1, min(remaining, 1) * 1000)))
            if ready < 0 {
                if errno == EINTR { continue }
                throw HTTPClientError("poll: errno \(errno)")
            }
            guard ready > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: limit)
            let count = recv(fd, &buffer, buffer.count, 0)
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw HTTPClientError(errno == ECONNRESET ? "connection reset" : "recv: errno \(errno)")
            }
            return Array(buffer[0..<count])
        }
    }

    /// Waits up to `timeout` seconds for the server to close the connection, discarding
    /// anything it sends. Returns whether it closed (end of stream or reset).
    func waitForClose(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            do {
                if try receive(deadline: deadline).isEmpty { return true }
            } catch let error as HTTPClientError {
                return error.description != "timed out waiting for the server"
            } catch {
                return true
            }
        }
    }

    /// Reads one whole response (body by Content-Length, chunked, or to the end of the
    /// stream), within `timeout` seconds. `head` says the request was a HEAD (no body).
    func readResponse(timeout: Double = 10, head: Bool = false) throws -> HTTPResult {
        let deadline = Date().addingTimeInterval(timeout)
        var result = try readHead(deadline: deadline)
        if result.status == 100 { return try readResponse(timeout: deadline.timeIntervalSinceNow, head: head) }
        if head || result.status == 204 || result.status == 304 || (100..<200).contains(result.status) { return result }
        if result.header("transfer-encoding")?.lowercased().contains("chunked") == true {
            result.body = try readChunked(deadline: deadline)
        } else if let lengthText = result.header("content-length"), let length = Int(lengthText) {
            while pending.count < length {
                let bytes = try receive(deadline: deadline)
                if bytes.isEmpty { throw HTTPClientError("the server closed the connection after \(pending.count) of \(length) body bytes") }
                pending += bytes
            }
            result.body = Array(pending[0..<length])
            pending.removeFirst(length)
        } else {
            while true {
                let bytes = try receive(deadline: deadline)
                if bytes.isEmpty { break }
                pending += bytes
            }
            result.body = pending
            pending = []
        }
        return result
    }

    /// Reads a response's status line and headers, leaving its body to be read.
    func readHead(deadline: Date) throws -> HTTPResult {
        var headerEnd: Int?
        while true {
            if let end = Self.find([13, 10, 13, 10], in: pending) { headerEnd = end; break }
            let bytes = try receive(deadline: deadline)
            if bytes.isEmpty {
                throw HTTPClientError(pending.isEmpty ? "the server closed the connection without answering"
                                                      : "the server closed the connection inside the headers")
            }
            pending += bytes
        }
        let headerText = String(decoding: pending[0..<headerEnd!], as: UTF8.self)
        pending.removeFirst(headerEnd! + 4)
        var lines = headerText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else {
            throw HTTPClientError("bad status line in \(headerText.debugDescription)")
        }
        let headers = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return HTTPResult(status: status, headers: headers, body: [])
    }

    private func readChunked(deadline: Date) throws -> [UInt8] {
        var body: [UInt8] = []
        while let chunk = try readChunk(deadline: deadline) { body += chunk }
        return body
    }

    /// Reads the next chunk of a chunked body: its bytes, or nil for the last (empty) one.
    func readChunk(deadline: Date) throws -> [UInt8]? {
        while Self.find([13, 10], in: pending) == nil {
            let bytes = try receive(deadline: deadline)
            if bytes.isEmpty { throw HTTPClientError("the server closed the connection inside a chunked body") }
            pending += bytes
        }
        let lineEnd = Self.find([13, 10], in: pending)!
        let sizeText = String(decoding: pending[0..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
        guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
            throw HTTPClientError("bad chunk size \(sizeText.debugDescription)")
        }
        pending.removeFirst(lineEnd + 2)
        while pending.count < size + 2 {
            let bytes = try receive(deadline: deadline)
            if bytes.isEmpty { throw HTTPClientError("the server closed the connection inside a chunk") }
            pending += bytes
        }
        if size == 0 {
            // Trailers are not expected; skip to the empty line.
            while Self.find([13, 10], in: pending).map({ $0 > 0 }) ?? false {
                pending.removeFirst(Self.find([13, 10], in: pending)! + 2)
            }
            if pending.count >= 2 { pending.removeFirst(2) }
            return nil
        }
        defer { pending.removeFirst(size + 2) }
        return Array(pending[0..<size])
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for index in 0...(haystack.count - needle.count) where haystack[index] == needle[0] {
            if Array(haystack[index..<(index + needle.count)]) == needle { return index }
        }
        return nil
    }

    /// Sends one request on this connection and reads its response.
    func request(
        _ method: String, _ path: String, body: [UInt8]? = nil, headers: [String: String] = [:], timeout: Double = 10
    ) throws -> HTTPResult {
        try send(HTTPClient.requestBytes(method, path, body: body, headers: headers))
        return try readResponse(timeout: timeout, head: method == "HEAD")
    }
}

/// A blocking HTTP/1.1 client: one connection per request, closed after the response.
struct HTTPClient: Sendable {
    let port: UInt16

    /// The bytes of a request: request line, `Host`, the headers given, `Content-Length`
    /// and `Content-Type: application/json` when there is a body (unless given).
    static func requestBytes(_ method: String, _ path: String, body: [UInt8]?, headers: [String: String]) -> [UInt8] {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        let given = Set(headers.keys.map { $0.lowercased() })
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
        if let body {
            if !given.contains("content-length") && !given.contains("transfer-encoding") { text += "Content-Length: \(body.count)\r\n" }
            if !given.contains("content-type") { text += "Content-Type: application/json\r\n" }
        }
        text += "\r\n"
        return Array(text.utf8) + (body ?? [])
    }

    /// Sends a request on a new connection and reads the response.
    func request(
        _ method: String, _ path: String, body: [UInt8]? = nil, headers: [String: String] = [:], timeout: Double = 10
    ) throws -> HTTPResult {
        let connection = try HTTPConnection(port: port, timeout: timeout)
        defer { connection.close() }
        return try connection.request(method, path, body: body, headers: headers, timeout: timeout)
    }

    func get(_ path: String, headers: [String: String] = [:], timeout: Double = 10) throws -> HTTPResult {
        try request("GET", path, headers: headers, timeout: timeout)
    }

    func delete(_ path: String, headers: [String: String] = [:]) throws -> HTTPResult {
        try request("DELETE", path, headers: headers)
    }

    func put(_ path: String, _ body: String, headers: [String: String] = [:]) throws -> HTTPResult {
        try request("PUT", path, body: Array(body.utf8), headers: headers)
    }

    func post(_ path: String, _ body: String, headers: [String: String] = [:]) throws -> HTTPResult {
        try request("POST", path, body: Array(body.utf8), headers: headers)
    }

    func post(_ path: String, bytes: [UInt8], headers: [String: String] = [:]) throws -> HTTPResult {
        try request("POST", path, body: bytes, headers: headers)
    }

    /// The value of the unlabelled metric `name` on `/metrics` (gauges are written as
    /// decimals, `3.0`), or nil when it is missing or not a whole number.
    func metric(_ name: String, timeout: Double = 10) throws -> Int? {
        let line = try get("/metrics", timeout: timeout).text.split(separator: "\n").first { $0.hasPrefix("\(name) ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") }.flatMap { Int(exactly: $0) }
    }

    /// Opens a connection, for raw (hostile) use.
    func connect(timeout: Double = 5, receiveBuffer: Int32? = nil) throws -> HTTPConnection {
        try HTTPConnection(port: port, timeout: timeout, receiveBuffer: receiveBuffer)
    }

    /// Requests of `method` on `route` answered so far (`batchdiff_requests_total`, every status).
    func requestsAnswered(_ method: String, _ route: String) throws -> Int {
        try get("/metrics").text.split(separator: "\n")
            .filter { $0.hasPrefix("batchdiff_requests_total{") && $0.contains("route=\"\(route)\"") && $0.contains("method=\"\(method)\"") }
            .compactMap { Double($0.split(separator: " ").last ?? "").map { Int($0) } }
            .reduce(0, +)
    }
}

extension HTTPResult {
    /// The body as it was before its `Content-Encoding: gzip`, if it has one.
    func inflatedBody() throws -> [UInt8] {
        guard header("content-encoding") == "gzip" else { return body }
        var output: [UInt8] = []
        try body.withUnsafeBytes { try GzipInflater().inflate($0, into: &output, limit: 1 << 30) }
        return output
    }
}
