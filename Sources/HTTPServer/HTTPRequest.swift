/// A complete HTTP request, body included, as plain Swift values.
public struct HTTPRequest: Sendable {
    /// The method as sent, e.g. `GET`.
    public var method: String
    /// The path, percent-decoded (but for `%00`, kept as it is), without the query.
    public var path: String
    /// Header values by lowercased name (the first of repeated headers).
    public var headers: [String: String]
    /// Query arguments, percent-decoded but for `%00` (the first of repeated arguments).
    public var query: [String: String]
    /// The whole body.
    public var body: [UInt8]

    public init(method: String, path: String, headers: [String: String] = [:], query: [String: String] = [:], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.headers = headers
        self.query = query
        self.body = body
    }

    /// The value of the header `name` (any case).
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}
