/// What must hold for a write to be stored (`If-Match`), checked against the feed's latest
/// version when the write is stored.
public enum WriteCondition: Sendable, Equatable {
    /// Always stored.
    case none
    /// Stored when the feed exists (`If-Match: *`).
    case exists
    /// Stored when the feed exists and its latest version is one of these.
    case latest(in: Set<Int>)

    /// Whether the condition holds for a feed whose latest version is `latest` (`nil`: no
    /// feed yet).
    func holds(forLatest latest: Int?) -> Bool {
        switch self {
        case .none: true
        case .exists: latest != nil
        case .latest(let versions): latest.map(versions.contains) ?? false
        }
    }
}
