/// What must hold for a write to be stored (`If-Match`, `If-None-Match`), checked against
/// the feed's latest version when the write is stored: in a store shared by servers, the
/// check and the write are one step (a write whose store moved on meanwhile is checked
/// again against the new latest).
package enum WriteCondition: Sendable, Equatable {
    /// Always stored.
    case none
    /// Stored when the feed exists (`If-Match: *`).
    case exists
    /// Stored when the feed exists and its latest version is one of these.
    case latest(in: Set<Int>)
    /// Stored when the feed does not exist yet (`If-None-Match: *`): it creates the feed.
    case absent
    /// Stored when the feed does not exist or its latest version is none of these
    /// (`If-None-Match` with entity tags).
    case latestNot(in: Set<Int>)
    /// Stored when both hold (`If-Match` and `If-None-Match` together).
    indirect case both(WriteCondition, WriteCondition)

    /// Whether the condition holds for a feed whose latest version is `latest` (`nil`: no
    /// feed yet).
    func holds(forLatest latest: Int?) -> Bool {
        switch self {
        case .none: true
        case .exists: latest != nil
        case .latest(let versions): latest.map(versions.contains) ?? false
        case .absent: latest == nil
        case .latestNot(let versions): !(latest.map(versions.contains) ?? false)
        case .both(let first, let second): first.holds(forLatest: latest) && second.holds(forLatest: latest)
        }
    }
}
