import BatchDiff

/// A collection in one of its two shapes (docs/batch-format.md §1.1).
public enum JSONCollection: Sendable {
    /// A JSON array of items.
    case list(JSONItems)
    /// `{"sections": [...]}`, each section an object with an identity and an `items` array.
    case sectioned(JSONSections)

    /// "a list" or "a sectioned collection", for messages.
    public var shapeName: String {
        switch self {
        case .list: "a list"
        case .sectioned: "a sectioned collection"
        }
    }
}
