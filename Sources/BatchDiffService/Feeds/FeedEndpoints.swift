import BatchDiffJSON
import HTTPServer

extension BatchDiffService {
    /// Feed ids: 1 to 128 characters of `[A-Za-z0-9._-]`.
    private func validFeedID(_ id: String) throws(Problem) -> String {
        let allowed = id.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"): true
            default: false
            }
        }
        guard allowed, (1...128).contains(id.utf8.count) else { throw Problem.invalidFeedID(id) }
        return id
    }

    private func existingFeed(_ id: String) throws(Problem) -> Feed {
        guard let feed = feeds.feed(try validFeedID(id)) else { throw Problem.feedNotFound(id) }
        return feed
    }

    /// `PUT /feeds/{id}`: stores a snapshot; `If-Match: "N"` makes it conditional.
    func putFeed(_ id: String, _ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let id = try validFeedID(id)
        let idKey = request.query["idKey"]
        if let idKey, !(1...128).contains(idKey.utf8.count) { throw Problem.badQuery("idKey: must be 1 to 128 bytes") }
        let document = try readJSON(request)
        let ifMatch = request.header("if-match")
        let write = try feeds.put(id: id, idKey: idKey, document: document) { latest throws(Problem) in
            guard let ifMatch else { return }
            guard let latest else { throw Problem.preconditionFailed("If-Match \(ifMatch): feed \(id) does not exist yet") }
            // If-Match compares strongly: a weak tag never matches.
            guard Self.entityTags(ifMatch, weakMatches: false).contains(where: { $0 == "*" || $0 == "\(latest)" }) else {
                throw Problem.preconditionFailed("If-Match \(ifMatch): feed \(id) is at version \(latest)")
            }
        }
        return .json(200, write.body, headers: [("ETag", "\"\(write.version)\"")])
    }

    /// `DELETE /feeds/{id}`.
    func deleteFeed(_ id: String) throws(Problem) -> HTTPResponse {
        guard feeds.delete(try validFeedID(id)) else { throw Problem.feedNotFound(id) }
        return HTTPResponse(status: 204)
    }

    /// `GET /feeds/{id}`: the latest snapshot, with `ETag`; `If-None-Match` gives 304.
    func getFeed(_ id: String, _ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let feed = try existingFeed(id)
        let latest = feed.latestText
        let tag = "\"\(latest.version)\""
        if let ifNoneMatch = request.header("if-none-match"),
           Self.entityTags(ifNoneMatch, weakMatches: true).contains(where: { $0 == "*" || $0 == "\(latest.version)" }) {
            return HTTPResponse(status: 304, headers: [("ETag", tag)])
        }
        var output = JSONOutput(capacity: latest.bytes.count + 64)
        output.raw("{\"feed\":")
        output.string(feed.id)
        output.raw(",\"version\":")
        output.integer(latest.version)
        output.raw(",\"data\":")
        output.raw(latest.bytes)
        output.raw("}")
        return .json(200, output.bytes, headers: [("ETag", tag)])
    }

    /// `GET /feeds`: every feed with its latest version.
    func listFeeds() -> HTTPResponse {
        var output = JSONOutput()
        output.raw("{\"feeds\":")
        output.array(feeds.all.map { ($0.id, $0.latestVersion) }.sorted { $0.0 < $1.0 }) { output, feed in
            output.raw("{\"feed\":")
            output.string(feed.0)
            output.raw(",\"version\":")
            output.integer(feed.1)
            output.raw("}")
        }
        output.raw("}")
        return .json(200, output.bytes)
    }

    /// `GET /feeds/{id}/changes?since=N[&wait=S]`: the batch from version N to the latest,
    /// with the values; with `wait`, a client already at the latest waits for the next one.
    func changes(_ id: String, _ request: HTTPRequest) throws(Problem) -> HTTPReply {
        let feed = try existingFeed(id)
        guard let sinceText = request.query["since"] else { throw Problem.badQuery("since: required, a version number (0 for everything)") }
        guard let since = Int(sinceText), since >= 0 else { throw Problem.badQuery("since: expected a non-negative integer, not \(sinceText.debugDescription)") }
        var wait = 0
        if let waitText = request.query["wait"] {
            guard let seconds = Int(waitText), seconds >= 0 else {
                throw Problem.badQuery("wait: expected a non-negative number of seconds, not \(waitText.debugDescription)")
            }
            wait = min(seconds, configuration.maxWait)
        }
        if wait > 0 && since == feed.latestVersion {
            let duration = Duration.seconds(wait)
            return .later { pending in feed.park(pending, since: since, wait: duration) }
        }
        if let answer = feed.computedAnswer(since: since) { return .now(.json(200, answer)) }
        // A diff to compute: off the server's threads, on the feed's queue.
        return .later { pending in feed.answer(since: since) { pending.send($0) } }
    }

    /// The entity tags of an `If-Match` or `If-None-Match` header, without quotes (`*` as
    /// is). Weak tags (`W/"3"`) are kept only when `weakMatches` (If-None-Match's weak
    /// comparison); If-Match compares strongly, so they are left out.
    static func entityTags(_ header: String, weakMatches: Bool) -> [String] {
        header.split(separator: ",").compactMap { tag in
            var tag = tag.trimmingCharacters(in: .whitespaces)
            if tag.hasPrefix("W/") {
                guard weakMatches else { return nil }
                tag.removeFirst(2)
            }
            return tag.count >= 2 && tag.hasPrefix("\"") && tag.hasSuffix("\"") ? String(tag.dropFirst().dropLast()) : tag
        }
    }
}
