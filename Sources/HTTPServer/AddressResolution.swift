import Glibc

/// A host and port resolved to the first socket address getaddrinfo(3) gives, for the
/// time of `body`; a failure says why, in getaddrinfo's words.
func withResolvedAddress<Result>(
    host: String, port: Int, forListening: Bool, _ body: (UnsafePointer<addrinfo>) throws -> Result
) throws -> Result {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    hints.ai_flags = forListening ? AI_PASSIVE : 0
    var found: UnsafeMutablePointer<addrinfo>?
    let status = getaddrinfo(host, String(port), &hints, &found)
    guard status == 0, let found else {
        throw HTTPServerError(description: "cannot resolve host '\(host)': \(String(cString: gai_strerror(status)))")
    }
    defer { freeaddrinfo(found) }
    return try body(found)
}
