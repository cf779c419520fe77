import Foundation

/// One server-sent event as a client sees it (the HTML standard's parsing): its type
/// (`message` when none was named), its id field if it had one, and its data lines joined.
struct ReceivedEvent {
    var type = "message"
    var id: String?
    var data = ""

    /// The data as a JSON object; empty when it is not one.
    var object: [String: Any] { HTTPResult(status: 200, headers: [], body: Array(data.utf8)).object }
}

/// A client of `GET .../changes` with `Accept: text/event-stream` on its own connection:
/// the head, then events as they arrive, comments counted apart.
final class EventStreamClient {
    let connection: HTTPConnection
    let head: HTTPResult
    private var text = ""
    private(set) var comments: [String] = []
    private(set) var retry: Int?

    /// Opens a stream of `path` (the query included); `headers` are added to the request.
    init(_ client: HTTPClient, _ path: String, headers: [String: String] = [:], timeout: Double = 10) throws {
        connection = try client.connect()
        try connection.send(HTTPClient.requestBytes("GET", path, body: nil, headers: ["Accept": "text/event-stream"].merging(headers) { $1 }))
        head = try connection.readHead(deadline: Date().addingTimeInterval(timeout))
    }

    /// The next event within `timeout` seconds; nil when the stream ended first.
    func next(timeout: Double = 10) throws -> ReceivedEvent? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let event = takeEvent() { return event }
            guard let chunk = try connection.readChunk(deadline: deadline) else { return nil }
            text += String(decoding: chunk, as: UTF8.self)
        }
    }

    /// Reads until the stream ends (the last chunk) within `timeout`; the events left unread.
    func readToEnd(timeout: Double = 10) throws -> [ReceivedEvent] {
        var events: [ReceivedEvent] = []
        while let event = try next(timeout: timeout) { events.append(event) }
        return events
    }

    /// Parses one block of lines ended by a blank line, if one is complete; comment-only and
    /// `retry` blocks are recorded and skipped.
    private func takeEvent() -> ReceivedEvent? {
        while let end = text.range(of: "\n\n") {
            let block = text[..<end.lowerBound]
            text.removeSubrange(..<end.upperBound)
            var event = ReceivedEvent()
            var data: [String] = []
            for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix(":") {
                    comments.append(String(line.dropFirst().drop { $0 == " " }))
                    continue
                }
                let (field, value) = line.firstIndex(of: ":").map { colon in
                    (line[..<colon], line[line.index(after: colon)...].drop { $0 == " " })
                } ?? (line[...], ""[...])
                switch field {
                case "event": event.type = String(value)
                case "id": event.id = String(value)
                case "data": data.append(String(value))
                case "retry": retry = Int(value)
                default: break
                }
            }
            guard !data.isEmpty else { continue }
            event.data = data.joined(separator: "\n")
            return event
        }
        return nil
    }
}
