import BatchDiff

/// A row read from JSON: the fingerprints of its identity and of its whole content, and
/// where its text stands in the document it came from.
public struct JSONItem: Diffable, Hashable, Sendable {
    /// The identity member's value, or the whole item when it has none.
    public var identity: Fingerprint
    /// The whole item, in canonical form.
    public var content: Fingerprint
    /// The byte span of the item's text in its document.
    public var span: Range<Int> { Int(start)..<Int(end) }
    let start: Int32
    let end: Int32

    public init(identity: Fingerprint, content: Fingerprint, span: Range<Int>) {
        self.identity = identity
        self.content = content
        start = Int32(span.lowerBound)
        end = Int32(span.upperBound)
    }

    public var identityHash: Int { Int(truncatingIfNeeded: identity.low) }

    public func isContentEqual(to other: JSONItem) -> Bool { content == other.content }
}

/// A section read from JSON, without its rows: the fingerprints of its identity and of its
/// header content (every member but `items`), and where the whole section's text stands.
public struct JSONSectionHeader: Diffable, Hashable, Sendable {
    public var identity: Fingerprint
    public var content: Fingerprint
    public var span: Range<Int> { Int(start)..<Int(end) }
    let start: Int32
    let end: Int32

    public init(identity: Fingerprint, content: Fingerprint, span: Range<Int>) {
        self.identity = identity
        self.content = content
        start = Int32(span.lowerBound)
        end = Int32(span.upperBound)
    }

    public var identityHash: Int { Int(truncatingIfNeeded: identity.low) }

    public func isContentEqual(to other: JSONSectionHeader) -> Bool { content == other.content }
}

/// A collection in one of the contract's two shapes.
public enum JSONCollection: Sendable {
    /// A JSON array of items.
    case list([JSONItem])
    /// `{"sections": [...]}`, each section an object with an identity and an `items` array.
    case sectioned([Section<JSONSectionHeader, JSONItem>])

    /// "a list" or "a sectioned collection", for messages.
    public var shapeName: String {
        switch self {
        case .list: "a list"
        case .sectioned: "a sectioned collection"
        }
    }
}
