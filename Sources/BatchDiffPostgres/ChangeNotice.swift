import BatchDiffFeeds

/// A feed's change as the store sends it to every server: the payload of a `NOTIFY` on
/// ``channel``, sent once the change is committed.
enum ChangeNotice {
    static let channel = "batchdiff"

    /// `appended <version> <feed id>` or `deleted <feed id>` (feed ids have no spaces).
    static func payload(of change: FeedChange) -> String {
        switch change {
        case .appended(let id, let version): "appended \(version) \(id.name)"
        case .deleted(let id): "deleted \(id.name)"
        case .missed: "missed"
        }
    }

    /// The change a payload tells of, `nil` for one this server does not know (a later
    /// server's, say).
    static func change(of payload: String) -> FeedChange? {
        let words = payload.split(separator: " ", omittingEmptySubsequences: false)
        switch (words.first, words.count) {
        case ("appended", 3):
            guard let version = Int(words[1]), let id = try? FeedID(String(words[2])) else { return nil }
            return .appended(id, version: version)
        case ("deleted", 2):
            return (try? FeedID(String(words[1]))).map(FeedChange.deleted)
        default:
            return nil
        }
    }
}
