/// A complete HTTP request, body included, as plain Swift values.
public struct HTTPRequest: Sendable {
    /// The method as sent, e.g. `GET`.
    public var method: String
    /// The path, percent-decoded (but for `%00`, kept as it is), without the query; an
    /// absolute-form target (`http://host/path`) gives its path.
    public var path: String
    /// Header values by lowercased name; repeated lines of one header are joined with ", ".
    public var headers: [String: String]
    /// Query arguments, percent-decoded but for `%00` (the first of repeated arguments).
    public var query: [String: String]
    /// The whole body.
    public var body: [UInt8]
    /// The address of the client the request came from (behind a proxy: the proxy's);
    /// empty when it is not known.
    public var clientAddress: String

    public init(
        method: String, path: String, headers: [String: String] = [:], query: [String: String] = [:], body: [UInt8] = [], clientAddress: String = ""
    ) {
        self.method = method
        self.path = path
        self.headers = headers
        self.query = query
        self.body = body
        self.clientAddress = clientAddress
    }

    /// The value of the header `name` (any case).
    public func header(_ name: String) -> String? {
        // Names are mostly asked for in lowercase already, several times a request.
        headers[name.utf8.contains { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) } ? name.lowercased() : name]
    }

    /// The path of a request target: an absolute-form target (RFC 9112 section 3.2.2,
    /// `http://host/path`) loses its scheme and authority; any other is the path already.
    static func path(ofTarget target: String) -> String {
        guard !target.hasPrefix("/"), let schemeEnd = target.range(of: "://"),
              !target[..<schemeEnd.lowerBound].isEmpty, target[..<schemeEnd.lowerBound].allSatisfy({ $0.isLetter || $0 == "+" || $0 == "-" || $0 == "." })
        else { return target }
        let authorityAndPath = target[schemeEnd.upperBound...]
        return authorityAndPath.firstIndex(of: "/").map { String(authorityAndPath[$0...]) } ?? "/"
    }
}
