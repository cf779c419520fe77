/// How the server listens and what it tolerates.
public struct HTTPServerConfiguration: Sendable {
    /// The address to bind: a numeric IPv4 or IPv6 address, or a host name.
    public var host: String = "127.0.0.1"
    /// The port; 0 picks a free one (see ``HTTPServer/port``).
    public var port: Int = 8080
    /// The largest request body accepted, in bytes.
    public var bodyLimit: Int = 32 << 20
    /// Connections served at once; more are refused at accept.
    public var connectionLimit: Int = 1024
    /// Seconds a connection may stay idle (no bytes either way) before it is closed.
    public var connectionTimeout: Int = 15
    /// Seconds a connection may take to send a request's headers, however it trickles them
    /// (counted from the connection's start, or from the end of its previous request).
    public var headerTimeout: Int = 10
    /// Threads serving connections (epoll, one event loop each).
    public var threads: Int = 2
    /// Bytes of header buffer per connection; longer headers get 431.
    public var headerMemoryLimit: Int = 32 << 10

    public init() {}
}
