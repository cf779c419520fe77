import HTTPServer

/// A finished request's access log line, `GET /healthz 200 120us in=0 out=15`, kept as its
/// fields: the request's thread records it, and a log writer makes it text later, on its
/// own thread (``BatchDiffService/AccessLog``).
package struct AccessLine: Sendable {
    /// The method, one of a fixed set or `other`.
    package let method: String
    /// The path, every byte that is not printable ASCII and every space escaped as `%XX`
    /// (and `%` itself): a decoded `%0A`, `%20` or U+2028 cannot forge a line or a field.
    package let path: String
    /// The answer's status; 0 when none was sent.
    package let status: Int
    /// From the request's headers in to its answer sent.
    package let microseconds: Int
    /// Body bytes read.
    package let bytesIn: Int
    /// Body bytes sent.
    package let bytesOut: Int

    init(method: String, _ exchange: HTTPExchange) {
        self.method = method
        path = Self.escaped(exchange.path)
        status = exchange.status
        microseconds = exchange.nanoseconds / 1000
        bytesIn = exchange.bytesIn
        bytesOut = exchange.bytesOut
    }

    /// `path` with every byte outside `!` to `~`, and `%`, written `%XX`.
    static func escaped(_ path: String) -> String {
        let isPlain = { (byte: UInt8) in byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "%") }
        guard !path.utf8.allSatisfy(isPlain) else { return path }
        let hexDigits = Array("0123456789ABCDEF".utf8)
        var escaped: [UInt8] = []
        for byte in path.utf8 {
            if isPlain(byte) {
                escaped.append(byte)
            } else {
                escaped += [UInt8(ascii: "%"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]]
            }
        }
        return String(decoding: escaped, as: UTF8.self)
    }

    /// Appends the line's text to `bytes`: no time, level or label, no newline.
    package func write(into bytes: inout [UInt8]) {
        bytes.append(contentsOf: method.utf8)
        bytes.append(UInt8(ascii: " "))
        bytes.append(contentsOf: path.utf8)
        bytes.append(UInt8(ascii: " "))
        Self.write(decimal: status, into: &bytes)
        bytes.append(UInt8(ascii: " "))
        Self.write(decimal: microseconds, into: &bytes)
        bytes.append(contentsOf: "us in=".utf8)
        Self.write(decimal: bytesIn, into: &bytes)
        bytes.append(contentsOf: " out=".utf8)
        Self.write(decimal: bytesOut, into: &bytes)
    }

    /// Appends `value` (not negative) in decimal, without making a `String` of it: a log
    /// writer formats a hundred thousand lines a second.
    static func write(decimal value: Int, into bytes: inout [UInt8]) {
        let start = bytes.count
        var rest = max(value, 0)
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        bytes[start...].reverse()
    }
}
