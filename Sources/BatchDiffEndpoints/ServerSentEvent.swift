import BatchDiffFeeds

/// Events of a `text/event-stream` (HTML's server-sent events), as the pieces a
/// ``HTTPServer/ResponseStream`` sends: a body shared by many streams is not copied.
enum ServerSentEvent {
    /// An event: `event: <type>` (none for a plain message), `id: <id>` (none: the client
    /// keeps the last), then the data, one `data:` line per line of it (a client joins them
    /// with line feeds), then a blank line. `hasLineBreaks`, when known, spares a look
    /// through the data: data of one line is sent as it is, shared by every stream.
    static func event(_ type: String? = nil, id: Int?, data: [UInt8], hasLineBreaks: Bool? = nil) -> [[UInt8]] {
        let head = (type.map { "event: \($0)\n" } ?? "") + (id.map { "id: \($0)\n" } ?? "")
        let lineBreaks = hasLineBreaks ?? Self.hasLineBreaks(data)
        guard lineBreaks else { return [Array(head.utf8), Self.dataField, data, Self.eventEnd] }
        // CR, LF and CRLF all end a line of the stream: each line of the data is a field.
        var lines: [UInt8] = []
        var previous: UInt8 = 0
        for byte in data {
            if byte == UInt8(ascii: "\n") && previous == UInt8(ascii: "\r") {
                previous = byte
                continue
            }
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                lines.append(UInt8(ascii: "\n"))
                lines.append(contentsOf: dataField)
            } else {
                lines.append(byte)
            }
            previous = byte
        }
        return [Array(head.utf8), Self.dataField, lines, Self.eventEnd]
    }

    /// A comment, which clients ignore: it keeps the connection (and proxies) awake.
    static func comment(_ text: String) -> [[UInt8]] {
        [Array(": \(text)\n\n".utf8)]
    }

    /// How long a client waits before it reconnects after the stream ends, in milliseconds.
    static func retry(milliseconds: Int) -> [[UInt8]] {
        [Array("retry: \(milliseconds)\n\n".utf8)]
    }

    /// Whether `data` holds a line break (CR or LF): then it is sent as a field per line.
    @Sendable static func hasLineBreaks(_ data: [UInt8]) -> Bool {
        data.contains { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }
    }

    private static let dataField = Array("data: ".utf8)
    private static let eventEnd = Array("\n\n".utf8)
}

extension AnswerMemo<Bool> {
    /// Whether an answer's text holds a line break, found once: an answer of one line is
    /// framed as one event line, shared, by every stream that sends it.
    static let hasLineBreaks = AnswerMemo("event-line-breaks", make: ServerSentEvent.hasLineBreaks)
}
