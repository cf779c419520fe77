/// The routes of the service, recognised from a path.
enum Route: Equatable {
    case health
    case metrics
    case diff
    case feeds
    case feed(String)
    case changes(String)

    init?(path: String) {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        switch (parts.count, parts.first) {
        case (1, "healthz"): self = .health
        case (1, "metrics"): self = .metrics
        case (1, "diff"): self = .diff
        case (1, "feeds"): self = .feeds
        case (2, "feeds") where parts.last == "": self = .feeds
        case (2, "feeds"): self = .feed(String(parts.last!))
        case (3, "feeds") where parts.last == "changes": self = .changes(String(parts[parts.startIndex + 1]))
        default: return nil
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
