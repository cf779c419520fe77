import BatchDiffFeeds
import BatchDiffJSON
import HTTPServer

/// An RFC 9457 problem document: what went wrong, where, with a stable code.
struct Problem: Error {
    var status: Int
    /// Stable snake_case code; the document's `type` is `urn:batchdiff:<code>`.
    var code: String
    var title: String
    /// What and where, so a person can act on it.
    var detail: String
    /// Extra response headers (`Allow` for 405).
    var headers: [(name: String, value: String)] = []
    /// Extra members, written as given (e.g. `latest` for 410).
    var extraMembers: [(name: StaticString, value: Int)] = []

    var response: HTTPResponse {
        var output = JSONOutput()
        output.object { output in
            output.key("type")
            output.string("urn:batchdiff:\(code)")
            output.key("title")
            output.string(title)
            output.key("status")
            output.integer(status)
            output.key("detail")
            output.string(detail)
            output.key("code")
            output.string(code)
            for member in extraMembers {
                output.key(member.name)
                output.integer(member.value)
            }
        }
        // Never kept by a cache: a 410 or a 503 is of this moment.
        return HTTPResponse(status: status, headers: [("Content-Type", "application/problem+json"), ("Cache-Control", "no-store")] + headers, body: output.bytes)
    }
}

extension Problem {
    /// A body that is not JSON (400 `malformed_json`), or whose object names a member twice
    /// (400 `duplicate_member`, the detail naming the member and where).
    static func malformedJSON(_ error: JSONSyntaxError) -> Problem {
        guard error.duplicateMember == nil else {
            return Problem(status: 400, code: "duplicate_member", title: "Member named twice", detail: error.description)
        }
        return Problem(status: 400, code: "malformed_json", title: "Malformed JSON", detail: error.description)
    }

    static func badQuery(_ detail: String) -> Problem {
        Problem(status: 400, code: "invalid_query", title: "Invalid query parameter", detail: detail)
    }

    static func badHeader(_ detail: String) -> Problem {
        Problem(status: 400, code: "invalid_header", title: "Invalid header", detail: detail)
    }

    static func invalidOption(_ detail: String) -> Problem {
        Problem(status: 400, code: "invalid_option", title: "Invalid option", detail: detail)
    }

    static func wrongShape(_ error: CollectionShapeError) -> Problem {
        Problem(status: 422, code: "invalid_shape", title: "JSON of the wrong shape", detail: error.description)
    }

    /// A collection that repeats an identity where they must be unique (`uniqueIdentities`).
    static func duplicateIdentity(_ detail: String) -> Problem {
        Problem(status: 422, code: "duplicate_identity", title: "Identity repeated", detail: detail)
    }

    /// A row or section whose sort key holds what no order compares (an array, an object).
    static func invalidSortKey(_ detail: String) -> Problem {
        Problem(status: 422, code: "invalid_sort_key", title: "Sort key that does not sort", detail: detail)
    }

    /// A `PATCH` op that cannot be applied: 422, its code the reason's, `op` its index.
    static func patchRefused(_ refusal: PatchRefusal) -> Problem {
        let detail = "op \(refusal.op): \(refusal.detail); nothing was changed"
        var problem = switch refusal.reason {
        case .identityNotFound: Problem(status: 422, code: "identity_not_found", title: "Identity not found", detail: detail)
        case .anchorNotFound: Problem(status: 422, code: "anchor_not_found", title: "Anchor not found", detail: detail)
        case .duplicateIdentity: duplicateIdentity(detail)
        case .invalidShape: wrongShape(detail)
        case .invalidSortKey: invalidSortKey(detail)
        }
        problem.extraMembers = [("op", refusal.op)]
        return problem
    }

    static func unsupportedPatchFormat(_ contentType: String) -> Problem {
        Problem(status: 415, code: "unsupported_media_type", title: "Unsupported media type",
                detail: "a PATCH body is application/json ops, {\"ops\": [{\"op\": \"upsert\", \"item\": ...}, ...]} (docs/feeds.md), not \(contentType.prefix(80))")
    }

    static func wrongShape(_ detail: String) -> Problem {
        Problem(status: 422, code: "invalid_shape", title: "JSON of the wrong shape", detail: detail)
    }

    static func notFound(_ path: String) -> Problem {
        Problem(status: 404, code: "not_found", title: "Not found", detail: "no route for \(path)")
    }

    static func methodNotAllowed(_ method: String, _ path: String, allowed: [String]) -> Problem {
        Problem(
            status: 405, code: "method_not_allowed", title: "Method not allowed",
            detail: "\(method) is not allowed on \(path); use \(allowed.joined(separator: ", "))",
            headers: [("Allow", allowed.joined(separator: ", "))]
        )
    }

    static func unsupportedMediaType(_ contentType: String) -> Problem {
        Problem(status: 415, code: "unsupported_media_type", title: "Unsupported media type",
                detail: "the body must be application/json, not \(contentType)")
    }

    static func unsupportedContentEncoding(_ encoding: String) -> Problem {
        Problem(status: 415, code: "unsupported_media_type", title: "Unsupported media type",
                detail: "the body must be sent plain or with Content-Encoding: gzip, not \(encoding.prefix(40))")
    }

    static func invalidEncoding(_ detail: String) -> Problem {
        Problem(status: 400, code: "invalid_encoding", title: "Invalid body encoding", detail: detail)
    }

    static func bodyTooLarge(limit: Int) -> Problem {
        Problem(status: 413, code: "body_too_large", title: "Body too large",
                detail: "the body is larger than the limit of \(limit) bytes")
    }

    static func serverBusy(retryAfter: Int) -> Problem {
        Problem(status: 503, code: "server_busy", title: "Server busy",
                detail: "the requests in flight use the memory request bodies may have (--request-memory); retry in \(retryAfter) s",
                headers: [("Retry-After", String(retryAfter))])
    }

    static let shuttingDown = Problem(status: 503, code: "shutting_down", title: "Shutting down",
                                      detail: "the server is shutting down; retry on another instance")
}

extension Problem {
    static func feedNotFound(_ id: String) -> Problem {
        Problem(status: 404, code: "feed_not_found", title: "Feed not found", detail: "there is no feed \(id)")
    }

    static func invalidFeedID(_ id: String) -> Problem {
        Problem(status: 400, code: "invalid_feed_id", title: "Invalid feed id",
                detail: "feed ids are 1 to 128 characters of A-Z a-z 0-9 . _ -, not \(id.prefix(140).debugDescription)")
    }

    static func versionGone(feed: String, since: Int, latest: Int) -> Problem {
        Problem(status: 410, code: "version_gone", title: "Version no longer retained",
                detail: "version \(since) of feed \(feed) is not retained (an old version, one of an earlier series, or newer than the latest); fetch the whole feed (latest is \(latest))",
                extraMembers: [("latest", latest)])
    }

    static func cursorGone(feed: String, cursor: String) -> Problem {
        Problem(status: 410, code: "cursor_gone", title: "Cursor gone",
                detail: "feed \(feed) has no row \(cursor.prefix(80)) to page after (it was removed); page again from the start or by offset")
    }

    static func anchorGone(feed: String, anchor: String, inVersion: Int?) -> Problem {
        let place = inVersion.map { "its version \($0) has no row \(anchor.prefix(80)) (the version the window is asked from)" }
            ?? "its latest version has no row \(anchor.prefix(80)) (it was removed)"
        return Problem(status: 410, code: "cursor_gone", title: "Cursor gone",
                       detail: "the window of feed \(feed) is anchored after a row that is gone: \(place); read the window again by offset, or after another row")
    }

    static func preconditionFailed(_ detail: String) -> Problem {
        Problem(status: 412, code: "precondition_failed", title: "Precondition failed", detail: detail)
    }

    static let unauthorized = Problem(
        status: 401, code: "unauthorized", title: "Unauthorized",
        detail: "this request needs an Authorization: Bearer <token> header", headers: [("WWW-Authenticate", "Bearer")]
    )

    static let forbidden = Problem(status: 403, code: "forbidden", title: "Forbidden", detail: "the bearer token is not valid here")

    /// A signed token that does not verify, or is expired, not yet valid or for another
    /// audience (RFC 6750 §3.1).
    static func invalidToken(_ detail: String) -> Problem {
        Problem(
            status: 401, code: "invalid_token", title: "Invalid token", detail: detail,
            headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)]
        )
    }

    /// A client that holds as many parked long polls and event streams as it may.
    static func tooManyStreams(limit: Int) -> Problem {
        Problem(
            status: 429, code: "too_many_streams", title: "Too many streams",
            detail: "this client holds \(limit) parked long polls and event streams, as many as it may; close one, or retry later",
            headers: [("Retry-After", "5")]
        )
    }

    /// A valid signed token without the scope, or the feed, a request needs (RFC 6750 §3.1).
    static func insufficientScope(_ detail: String) -> Problem {
        Problem(
            status: 403, code: "insufficient_scope", title: "Insufficient scope", detail: detail,
            headers: [("WWW-Authenticate", #"Bearer error="insufficient_scope""#)]
        )
    }
}

extension Problem {
    static func internalError(_ detail: String) -> Problem {
        Problem(status: 500, code: "internal_error", title: "Internal error", detail: detail)
    }

    static func storeUnavailable(_ detail: String) -> Problem {
        Problem(status: 503, code: "store_unavailable", title: "Store unavailable",
                detail: "the feeds' store cannot be reached (\(detail)); nothing was read or changed; retry in 1 s",
                headers: [("Retry-After", "1")])
    }

    static func feedIsSourced(_ id: String) -> Problem {
        Problem(status: 409, code: "feed_is_sourced", title: "Feed is sourced",
                detail: "feed \(id) is kept by the source database (a shape's feed template matches it): write the database's rows instead; nothing was changed")
    }

    static func sourceUnavailable(_ detail: String) -> Problem {
        Problem(status: 503, code: "source_unavailable", title: "Source unavailable",
                detail: "the source database cannot be reached to make this feed (\(detail)); retry in 1 s",
                headers: [("Retry-After", "1")])
    }

    static func feedStorageFull(_ id: String, limit: Int) -> Problem {
        Problem(status: 507, code: "feed_storage_full", title: "Feed storage full",
                detail: "the snapshot of feed \(id) cannot be stored: it would not fit in the \(limit) bytes feeds may hold even with every feed cut down to its latest version; nothing was stored; delete feeds or raise --max-feed-memory")
    }
}
