import Dispatch
import Gzip

/// Reads one HTTP/1.1 response off a ``Socket``: the status line, the headers, and the
/// body framed by `Content-Length`, `chunked`, or the end of the connection.
struct ResponseReader {
    private let socket: Socket
    private let deadline: DispatchTime
    private let maxBodyBytes: Int
    /// Bytes received and not yet consumed.
    private var buffer: [UInt8] = []
    /// Where each receive lands, allocated once.
    private var chunk = [UInt8](repeating: 0, count: 256 << 10)
    private var position = 0
    private var ended = false

    init(socket: Socket, deadline: DispatchTime, maxBodyBytes: Int) {
        self.socket = socket
        self.deadline = deadline
        self.maxBodyBytes = maxBodyBytes
    }

    /// The response to a request of `method`.
    mutating func response(toMethod method: String) throws(TransportError) -> HTTPClientResponse {
        var status = 100
        var headers: [(name: String, value: String)] = []
        // 1xx answers (`100 Continue`) come before the real one.
        while (100..<200).contains(status) {
            let statusLine = try line()
            let parts = statusLine.split(separator: " ", maxSplits: 2)
            guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let code = Int(parts[1]) else {
                throw TransportError("not an HTTP response: \(statusLine.prefix(80).debugDescription)")
            }
            status = code
            headers = []
            while case let header = try line(), !header.isEmpty {
                guard let colon = header.firstIndex(of: ":") else { throw TransportError("bad header line \(header.prefix(80).debugDescription)") }
                headers.append((String(header[..<colon]), header[header.index(after: colon)...].trimmingSpaces))
            }
        }
        let response = HTTPClientResponse(status: status, headers: headers, body: [])
        if method == "HEAD" || status == 204 || status == 304 { return response }
        var body: [UInt8]
        if response.header("transfer-encoding")?.lowercased().contains("chunked") == true {
            body = try chunkedBody()
        } else if let length = response.header("content-length") {
            guard let count = Int(length), count >= 0 else { throw TransportError("bad Content-Length \(length.debugDescription)") }
            guard count <= maxBodyBytes else { throw TransportError("the answer is over \(maxBodyBytes) bytes", isRetryable: false) }
            body = try bytes(count)
        } else {
            body = try rest()
        }
        if response.header("content-encoding")?.lowercased() == "gzip" {
            body = try inflated(body)
            headers.removeAll { $0.name.lowercased() == "content-encoding" }
        }
        return HTTPClientResponse(status: status, headers: headers, body: body)
    }

    /// A gzip body inflated, within the body limit.
    private func inflated(_ body: [UInt8]) throws(TransportError) -> [UInt8] {
        let inflater = GzipInflater()
        var plain: [UInt8] = []
        do {
            try body.withUnsafeBytes { try inflater.inflate($0, into: &plain, limit: maxBodyBytes) }
        } catch {
            throw TransportError("the gzip answer cannot be read: \(error)", isRetryable: false)
        }
        guard inflater.isAtEnd else { throw TransportError("the gzip answer is cut short") }
        return plain
    }

    private mutating func chunkedBody() throws(TransportError) -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let sizeLine = try line()
            guard let size = Int(sizeLine.prefix { $0 != ";" }.trimmingSpaces, radix: 16), size >= 0 else {
                throw TransportError("bad chunk size \(sizeLine.prefix(40).debugDescription)")
            }
            if size == 0 {
                while try !line().isEmpty {}  // trailers
                return body
            }
            guard size <= maxBodyBytes - body.count else { throw TransportError("the answer is over \(maxBodyBytes) bytes", isRetryable: false) }
            body += try bytes(size)
            guard try line().isEmpty else { throw TransportError("a chunk does not end where its size says") }
        }
    }

    /// The next line, without its CRLF.
    private mutating func line() throws(TransportError) -> String {
        while true {
            if let newline = buffer[position...].firstIndex(of: UInt8(ascii: "\n")) {
                var end = newline
                if end > position && buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                defer { position = newline + 1 }
                return String(decoding: buffer[position..<end], as: UTF8.self)
            }
            guard buffer.count - position < 64 << 10 else { throw TransportError("a header line over 64 KiB") }
            guard try fill() else { throw TransportError("the connection closed before the answer was complete") }
        }
    }

    /// The next `count` bytes.
    private mutating func bytes(_ count: Int) throws(TransportError) -> [UInt8] {
        while buffer.count - position < count {
            guard try fill() else { throw TransportError("the connection closed before the answer was complete") }
        }
        defer { position += count }
        return Array(buffer[position..<(position + count)])
    }

    /// Everything until the connection closes.
    private mutating func rest() throws(TransportError) -> [UInt8] {
        while try fill() {
            guard buffer.count - position <= maxBodyBytes else { throw TransportError("the answer is over \(maxBodyBytes) bytes", isRetryable: false) }
        }
        defer { position = buffer.count }
        return Array(buffer[position...])
    }

    /// Receives more bytes; false when the connection has closed.
    private mutating func fill() throws(TransportError) -> Bool {
        guard !ended else { return false }
        if position > 0 && position == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            position = 0
        }
        let count = try socket.receive(into: &chunk, deadline: deadline)
        if count == 0 { ended = true }
        buffer += chunk[..<count]
        return count > 0
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        let isSpace = { (c: Character) in c == " " || c == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
