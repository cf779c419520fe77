import HTTPServer

/// A finished request's access log line, `GET /healthz 200 120us in=0 out=15`, kept as its
/// fields: the request's thread records it, and a log writer makes it text later, on its
/// own thread (``BatchDiffService/AccessLog``).
public struct AccessLine: Sendable {
    /// The method, one of a fixed set or `other`.
    public let method: String
    /// The path, escaped when it holds a control character: a decoded %0A cannot forge a line.
    public let path: String
    /// The answer's status; 0 when none was sent.
    public let status: Int
    /// From the request's headers in to its answer sent.
    public let microseconds: Int
    /// Body bytes read.
    public let bytesIn: Int
    /// Body bytes sent.
    public let bytesOut: Int

    init(method: String, _ exchange: HTTPExchange) {
        self.method = method
        // (Control characters are ASCII, and no byte of a longer UTF-8 sequence is.)
        path = exchange.path.utf8.contains { $0 < 0x20 || $0 == 0x7F } ? exchange.path.debugDescription : exchange.path
        status = exchange.status
        microseconds = exchange.nanoseconds / 1000
        bytesIn = exchange.bytesIn
        bytesOut = exchange.bytesOut
    }

    /// Appends the line's text to `bytes`: no time, level or label, no newline.
    public func write(into bytes: inout [UInt8]) {
        bytes.append(contentsOf: method.utf8)
        bytes.append(UInt8(ascii: " "))
        bytes.append(contentsOf: path.utf8)
        bytes.append(UInt8(ascii: " "))
        bytes.append(contentsOf: String(status).utf8)
        bytes.append(UInt8(ascii: " "))
        bytes.append(contentsOf: String(microseconds).utf8)
        bytes.append(contentsOf: "us in=".utf8)
        bytes.append(contentsOf: String(bytesIn).utf8)
        bytes.append(contentsOf: " out=".utf8)
        bytes.append(contentsOf: String(bytesOut).utf8)
    }
}
