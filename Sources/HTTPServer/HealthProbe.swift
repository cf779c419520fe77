import Glibc

/// Asks a server for a path and reports the status code: what a container's health check needs.
public enum HealthProbe {
    /// The status code of `GET path` on host:port, or `nil` without an answer in time.
    /// A wildcard host (`0.0.0.0`, `::`) is asked on loopback.
    public static func status(host: String, port: Int, path: String = "/healthz", timeoutSeconds: Int = 3) -> Int? {
        let target = switch host {
        case "0.0.0.0", "": "127.0.0.1"
        case "::", "[::]": "::1"
        default: host
        }
        guard let answer = exchange(host: target, port: port, request: "GET \(path) HTTP/1.0\r\nHost: \(target)\r\n\r\n", timeoutSeconds: timeoutSeconds) else {
            return nil
        }
        return statusCode(of: answer)
    }

    /// The status code of a response's status line (`HTTP/1.1 200 OK`).
    static func statusCode(of answer: [UInt8]) -> Int? {
        let line = String(decoding: answer.prefix { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        let parts = line.split(separator: " ")
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), parts[1].count == 3 else { return nil }
        return Int(parts[1])
    }

    /// Sends `request` to host:port and returns the first bytes of the answer, or `nil` when
    /// the host cannot be reached or does not answer within `timeoutSeconds`.
    private static func exchange(host: String, port: Int, request: String, timeoutSeconds: Int) -> [UInt8]? {
        try? withResolvedAddress(host: host, port: port, forListening: false) { address -> [UInt8]? in
            let socket = Glibc.socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
            guard socket >= 0 else { return nil }
            defer { close(socket) }
            var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
            setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            guard connect(socket, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 else { return nil }
            let bytes = Array(request.utf8)
            guard send(socket, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else { return nil }
            var answer = [UInt8](repeating: 0, count: 64)
            let received = recv(socket, &answer, answer.count, 0)
            return received > 0 ? Array(answer.prefix(received)) : nil
        } ?? nil
    }
}
