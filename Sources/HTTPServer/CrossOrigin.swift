/// Which other origins' pages may read the server's answers (CORS, the Fetch standard): an
/// answer to a request whose `Origin` is allowed carries `Access-Control-Allow-Origin`
/// naming it, and the headers a page may read. Preflight requests (`OPTIONS`) are the
/// service's to answer; this adds the same headers to them.
public struct CrossOrigin: Sendable, Equatable {
    /// Origins allowed, as browsers send them (`https://app.example.com`); `*` allows any.
    public var origins: Set<String>

    public init(origins: Set<String> = []) {
        self.origins = origins
    }

    /// Headers a page may read beyond the ones every response shows.
    static let exposedHeaders = "ETag, Retry-After, Location, Content-Encoding, BatchDiff-Cursor"

    /// The headers to add to the answer of a request from `origin` (none when it is not
    /// allowed, or the request named none).
    func headers(forOrigin origin: String?) -> [(name: String, value: String)] {
        guard !origins.isEmpty else { return [] }
        // The answer depends on the request's origin: caches must keep it apart.
        guard let origin, origins.contains("*") || origins.contains(origin) else { return [("Vary", "Origin")] }
        return [("Access-Control-Allow-Origin", origin), ("Access-Control-Expose-Headers", Self.exposedHeaders), ("Vary", "Origin")]
    }
}
