import BatchDiffFeeds
import Gzip
import HTTPServer

/// gzip for the answers of a request that accepts it (`Accept-Encoding`, RFC 9110 §12.5.3):
/// an answer over ``minimumSize`` bytes is sent `Content-Encoding: gzip`, its `ETag`
/// `"<version>-gzip"` (``EntityTag``: the bytes differ from the plain answer's, the version
/// is the same); every answer that size carries `Vary: Accept-Encoding`, since its encoding
/// depends on the header. Smaller answers, and clients that do not ask, get it plain. An
/// answer that carries its gzip form (``HTTPResponse/gzippedBody``) is not compressed again.
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
        // A shared gzip form may still have to be made (once, for every client).
        return await Workers.run { encoded(response) }
    }

    /// The 304 that stands for an answer of `bodySize` bytes tagged `tag`: the tag it would
    /// have carried in this request's encoding, and its `Vary`; nothing is made of the answer.
    func notModified(tag: String, bodySize: Int) -> HTTPResponse {
        guard bodySize > Self.minimumSize else { return HTTPResponse(status: 304, headers: [("ETag", tag)]) }
        return HTTPResponse(status: 304, headers: [("ETag", acceptsGzip ? EntityTag.compressed(tag) : tag), ("Vary", "Accept-Encoding")])
    }

    /// `response` as this request takes it.
    func encoded(_ response: HTTPResponse) -> HTTPResponse {
        guard response.body.count > Self.minimumSize else { return response }
        var encoded = response
        if !response.headers.contains(where: { $0.name.lowercased() == "vary" && $0.value.contains("Accept-Encoding") }) {
            encoded.headers.append(("Vary", "Accept-Encoding"))
        }
        guard acceptsGzip else { return encoded }
        encoded.body = response.gzippedBody?() ?? Gzip.compress(response.body)
        encoded.gzippedBody = nil
        encoded.headers.append(("Content-Encoding", "gzip"))
        // The compressed bytes are not the plain ones: their tag says so, naming the same version.
        encoded.headers = encoded.headers.map { header in
            header.name.lowercased() == "etag" ? (header.name, EntityTag.compressed(header.value)) : header
        }
        return encoded
    }
}

extension AnswerMemo<[UInt8]> {
    /// An answer's gzip form, made once for all the clients that accept it.
    static let gzip = AnswerMemo("gzip") { Gzip.compress($0) }
}
