import BatchDiff

/// A row or a section header read from JSON: the fingerprints of its identity and of its
/// content, and where its text stands in the document it came from.
///
/// For a row, the content is the whole item; for a section header, every member of the
/// section but `items`, and the span is the whole section's text.
public struct JSONElement: Diffable, Hashable, Sendable {
    /// The identity member's value, or the whole content when there is none.
    public var identity: Fingerprint
    /// The content, in canonical form.
    public var content: Fingerprint
    /// The byte span of the element's text in its document.
    public var span: Range<Int> { Int(start)..<Int(end) }
    @usableFromInline let start: Int32
    @usableFromInline let end: Int32

    @inlinable
    public init(identity: Fingerprint, content: Fingerprint, span: Range<Int>) {
        self.identity = identity
        self.content = content
        start = Int32(span.lowerBound)
        end = Int32(span.upperBound)
    }

    @inlinable
    init(identity: Fingerprint, content: Fingerprint, start: Int32, end: Int32) {
        self.identity = identity
        self.content = content
        self.start = start
        self.end = end
    }

    @inlinable public var identityHash: Int { Int(truncatingIfNeeded: identity.low) }

    @inlinable public func isContentEqual(to other: JSONElement) -> Bool { content == other.content }
}

/// A row read from JSON.
public typealias JSONItem = JSONElement

/// A section read from JSON, without its rows.
public typealias JSONSectionHeader = JSONElement
