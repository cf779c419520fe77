import HTTPServer

extension BatchDiffService {
    /// Whether shared caches may keep the answer to `request`: a read of a public feed
    /// (`--public-feeds`), whoever asked; another request unless it carried a token, in its
    /// header or its query (then the client alone may). docs/feeds.md §5.4, docs/security.md.
    func isShared(_ request: HTTPRequest, _ credentials: Credentials) -> Bool {
        credentials.readsPublicFeed || (credentials.token == nil && request.header("authorization") == nil)
    }

    /// `response` as shared caches must see it: unchanged when they may keep it; else with
    /// `Cache-Control: private` when it says nothing of caches, or `private` put first in
    /// what it says when that is neither `private` nor `no-store`. So no answer to a token
    /// holder (a feed, a page, the listing, a 304, a write's answer) is kept by a CDN
    /// configured to cache what it is not told otherwise.
    func scoped(_ response: HTTPResponse, _ request: HTTPRequest, _ credentials: Credentials) -> HTTPResponse {
        guard !isShared(request, credentials) else { return response }
        var scoped = response
        guard let index = response.headers.firstIndex(where: { $0.name.lowercased() == "cache-control" }) else {
            scoped.headers.append(("Cache-Control", "private"))
            return scoped
        }
        let directives = response.headers[index].value.lowercased()
        if !directives.contains("private") && !directives.contains("no-store") {
            scoped.headers[index].value = "private, " + response.headers[index].value
        }
        return scoped
    }
}
