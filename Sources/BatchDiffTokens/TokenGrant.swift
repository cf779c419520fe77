/// What a valid token lets its holder do: read or write (or both) the feeds its patterns
/// name, until it expires.
public struct TokenGrant: Sendable, Equatable {
    /// Who the token is for (`sub`), if it says.
    public let subject: String?
    /// The feeds it names: exact ids, or prefixes (a pattern ending in `*`).
    public let feeds: [FeedPattern]
    public let canRead: Bool
    public let canWrite: Bool
    /// When it stops being valid here, in seconds since 1970: its `exp`, plus any leeway.
    public let expiresAt: Double

    /// Whether the token names feed `id`.
    public func covers(_ id: String) -> Bool { feeds.contains { $0.matches(id) } }
}

/// A feed-id pattern of a token's `feeds` claim: an exact id, or a prefix ending in `*`
/// (`*` alone: every feed).
public struct FeedPattern: Sendable, Equatable {
    /// The id, or the prefix without its `*`.
    public let text: String
    public let isPrefix: Bool

    /// The pattern written `pattern`; `nil` when a `*` stands anywhere but at its end.
    init?(_ pattern: String) {
        isPrefix = pattern.hasSuffix("*")
        text = isPrefix ? String(pattern.dropLast()) : pattern
        guard !text.contains("*"), isPrefix || !text.isEmpty else { return nil }
    }

    public func matches(_ id: String) -> Bool { isPrefix ? id.hasPrefix(text) : id == text }
}
