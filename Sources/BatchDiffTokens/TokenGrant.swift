import BatchDiffFeeds

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

/// A feed-id pattern of a token's `feeds` claim (and of `--public-feeds`): an exact id, or a
/// prefix ending in `*` (`*` alone: every feed).
public struct FeedPattern: Sendable, Equatable {
    /// The id, or the prefix without its `*`.
    public let text: String
    public let isPrefix: Bool

    /// The pattern written `pattern`; `nil` when a `*` stands anywhere but at its end, or
    /// when it holds a character no feed id has (ids are `A-Z a-z 0-9 . _ -`): such a
    /// pattern could only be meant to match by Unicode equivalence, which patterns never do.
    public init?(_ pattern: String) {
        isPrefix = pattern.utf8.last == UInt8(ascii: "*")
        text = isPrefix ? String(decoding: pattern.utf8.dropLast(), as: UTF8.self) : pattern
        guard text.utf8.allSatisfy(FeedID.isNameByte), isPrefix || !text.isEmpty else { return nil }
    }

    /// Whether feed `id` is this one, or begins with this prefix, byte for byte (never by
    /// canonical equivalence, as `String`'s `==` and `hasPrefix` compare).
    public func matches(_ id: String) -> Bool {
        isPrefix ? id.utf8.starts(with: text.utf8) : id.utf8.elementsEqual(text.utf8)
    }
}
