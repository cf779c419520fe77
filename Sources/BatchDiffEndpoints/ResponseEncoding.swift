import BatchDiffFeeds
import Gzip
import HTTPServer

/// gzip for the answers of a request that accepts it (`Accept-Encoding`, RFC 9110 §12.5.3):
/// an answer over ``minimumSize`` bytes is sent `Content-Encoding: gzip`, its `ETag` made
/// weak (the bytes differ from the plain answer's); every answer that size carries
/// `Vary: Accept-Encoding`, since its encoding depends on the header. Smaller answers, and
/// clients that do not ask, get it plain.
struct ResponseEncoding: Sendable {
    /// Answers up to this size are sent plain: compressing them saves nothing worth a header.
    static let minimumSize = 1024
    /// Answers from this size are compressed off the server's threads.
    static let offloadedSize = 128 << 10

    /// Whether the request accepts gzip.
    let acceptsGzip: Bool

    init(_ request: HTTPRequest) {
        acceptsGzip = request.header("accept-encoding").map(Self.acceptsGzip) ?? false
    }

    /// Whether an `Accept-Encoding` value allows gzip: `gzip` (or `x-gzip`, or `*` when gzip
    /// is not named) with a q-value above 0.
    static func acceptsGzip(_ header: String) -> Bool {
        var wildcard = false
        for (coding, quality) in qualityValues(header) {
            switch coding {
            case "gzip", "x-gzip": return quality > 0
            case "*": wildcard = quality > 0
            default: continue
            }
        }
        return wildcard
    }

    /// The reply with the answer `result` (or its problem), encoded; a large one is
    /// compressed off the server's threads.
    func reply(_ result: Result<HTTPResponse, Problem>) -> HTTPReply {
        let response: HTTPResponse
        switch result {
        case .success(let answer): response = answer
        case .failure(let problem): response = problem.response
        }
        guard acceptsGzip && response.body.count >= Self.offloadedSize else { return .now(encoded(response)) }
        return .later { pending in
            Task { pending.send(await encodedOffThread(response)) }
        }
    }

    /// `response` encoded; compressed on a worker when it is large.
    func encodedOffThread(_ response: HTTPResponse) async -> HTTPResponse {
        guard acceptsGzip && response.body.count >= Self.offloadedSize else { return encoded(response) }
        return await Workers.run { encoded(response) }
    }

    /// `response` as this request takes it.
    func encoded(_ response: HTTPResponse) -> HTTPResponse {
        guard response.body.count > Self.minimumSize else { return response }
        var encoded = response
        encoded.headers.append(("Vary", "Accept-Encoding"))
        guard acceptsGzip else { return encoded }
        encoded.body = Gzip.compress(response.body)
        encoded.headers.append(("Content-Encoding", "gzip"))
        // The compressed bytes are not the plain ones: their tag is weak (If-None-Match
        // compares weakly; If-Match compares strongly and never matches it).
        encoded.headers = encoded.headers.map { header in
            header.name.lowercased() == "etag" && !header.value.hasPrefix("W/") ? (header.name, "W/" + header.value) : header
        }
        return encoded
    }
}
