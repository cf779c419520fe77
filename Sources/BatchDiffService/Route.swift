/// The routes of the service, recognised from a path.
enum Route: Equatable {
    case health
    case metrics
    case diff
    case feeds
    case feed(String)
    case changes(String)

    init?(path: String) {
        switch path {
        case "/healthz": self = .health
        case "/metrics": self = .metrics
        case "/diff": self = .diff
        case "/feeds", "/feeds/": self = .feeds
        default:
            guard path.hasPrefix("/feeds/") else { return nil }
            let rest = path.dropFirst("/feeds/".count)
            guard let slash = rest.firstIndex(of: "/") else {
                self = .feed(String(rest))
                return
            }
            guard rest[slash...] == "/changes" else { return nil }
            self = .changes(String(rest[..<slash]))
        }
    }

    /// The methods the route answers.
    var methods: [String] {
        switch self {
        case .health, .metrics, .feeds, .changes: ["GET", "HEAD"]
        case .diff: ["POST"]
        case .feed: ["GET", "HEAD", "PUT", "DELETE"]
        }
    }

    /// Whether the route reads the body of a request with `method`.
    func readsBody(of method: String) -> Bool {
        switch self {
        case .diff: method == "POST"
        case .feed: method == "PUT"
        case .health, .metrics, .feeds, .changes: false
        }
    }

    /// The route as a metrics label (feed ids left out).
    var label: String {
        switch self {
        case .health: "/healthz"
        case .metrics: "/metrics"
        case .diff: "/diff"
        case .feeds: "/feeds"
        case .feed: "/feeds/{id}"
        case .changes: "/feeds/{id}/changes"
        }
    }
}
