import Foundation

/// How the server listens and what it tolerates.
public struct HTTPServerConfiguration: Sendable {
    /// The address to bind: a numeric IPv4 or IPv6 address, or a host name.
    public var host: String = "127.0.0.1"
    /// The port; 0 picks a free one (see ``HTTPServer/port``).
    public var port: Int = 8080
    /// The largest request body accepted, in bytes.
    public var bodyLimit: Int = 32 << 20
    /// Connections served at once; more are refused at accept, but for a few let in for
    /// ``probePaths`` alone.
    public var connectionLimit: Int = 4096
    /// Seconds a connection may stay idle (no bytes either way) before it is closed.
    public var connectionTimeout: Int = 15
    /// Seconds a connection may take to send a request's headers, however it trickles them
    /// (counted from the connection's start, or from the end of its previous request).
    public var headerTimeout: Int = 10
    /// Seconds a client may take to send a request's body, counted from the end of its
    /// headers, however it trickles it.
    public var bodyTimeout: Int = 60
    /// Threads serving connections (epoll, one event loop each).
    public var threads: Int = ProcessInfo.processInfo.activeProcessorCount
    /// Bytes of header buffer per connection; longer headers get 431.
    public var headerMemoryLimit: Int = 32 << 10
    /// Bytes that requests in flight may use for their bodies and what the service builds
    /// from them, each body byte counted ``memoryPerBodyByte`` times; a request that does
    /// not fit beside those in flight gets 503 (``HTTPServerRefusal/busy(retryAfter:)``).
    /// One request alone always fits.
    public var requestMemory: Int = 1 << 30
    /// What one body byte costs while its request is in flight: the byte itself and the
    /// state the service builds from it, at most.
    public var memoryPerBodyByte: Int = 1
    /// Bytes a second a client must take of a whole answer of 32 KiB or more, measured over
    /// each 30 s while the server still holds some of it to send, or its connection is
    /// closed (0: no floor). Parked requests and streams are never measured.
    public var minSendRate: Int = 1024
    /// Paths answered on the ``probeConnections`` let in past ``connectionLimit`` (health
    /// checks; none are let in without such paths); any other request there gets the busy
    /// refusal.
    public var probePaths: Set<String> = []
    /// Connections let in past ``connectionLimit`` for ``probePaths`` alone.
    public static let probeConnections = 3
    /// Open files the process needs besides its connections: the probe connections, each
    /// thread's event loop and wake-up pipe, and room for the listening socket, standard
    /// streams, logs and a store's files and database connections.
    public var reservedOpenFiles: Int { Self.probeConnections + 2 * threads + 64 }
    /// Origins whose pages may read the answers (none by default: same origin only).
    public var crossOrigin = CrossOrigin()

    public init() {}
}

extension HTTPServerConfiguration {
    /// The largest body limit: offsets into a body are 32-bit.
    public static let maxBodyLimit = 1 << 30

    /// Throws when a setting is out of its range.
    func validate() throws {
        let checks: [(Bool, String)] = [
            ((0...65535).contains(port), "port must be 0 to 65535"),
            ((1...Self.maxBodyLimit).contains(bodyLimit), "body limit must be 1 to \(Self.maxBodyLimit) bytes"),
            ((1...1_000_000).contains(connectionLimit), "connection limit must be 1 to 1000000"),
            ((0...86_400).contains(connectionTimeout), "connection timeout must be 0 to 86400 seconds"),
            ((1...86_400).contains(headerTimeout), "header timeout must be 1 to 86400 seconds"),
            ((1...86_400).contains(bodyTimeout), "body timeout must be 1 to 86400 seconds"),
            ((1...1024).contains(threads), "threads must be 1 to 1024"),
            ((1024...(16 << 20)).contains(headerMemoryLimit), "header memory limit must be 1 KiB to 16 MiB"),
            (requestMemory >= 1, "request memory must be at least 1 byte"),
            ((1...1024).contains(memoryPerBodyByte), "memory per body byte must be 1 to 1024"),
            ((0...(1 << 30)).contains(minSendRate), "minimum send rate must be 0 to 1 GiB a second"),
        ]
        if let failed = checks.first(where: { !$0.0 }) { throw HTTPServerError(description: failed.1) }
    }
}
