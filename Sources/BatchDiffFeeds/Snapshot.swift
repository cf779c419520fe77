import BatchDiff
import BatchDiffJSON

/// A version of a feed, whole: its JSON text, the collection read from it and the
/// fingerprint of the text's canonical form (equal snapshots make no new version).
public struct Snapshot: Sendable {
    /// The version number; 0 until the snapshot is stored.
    public private(set) var version: Int
    /// The JSON text, as the client sent it but for the whitespace between tokens (compact).
    public let bytes: [UInt8]
    /// The collection read from the text.
    public let collection: JSONCollection
    /// The fingerprint of the text's canonical form.
    public let fingerprint: Fingerprint

    /// A snapshot read from a document; ``FeedError/invalidSnapshot(_:)`` when it is not a
    /// collection (docs/batch-format.md §1.1).
    public init(document: JSONDocument, idKey: String) throws(FeedError) {
        do {
            let collection = try document.root.collection(idKey: idKey, path: "body")
            // Kept as long as the version: the rows without the room to spare that growing left.
            self.collection = switch collection {
            case .list(let items): .list(items.compacted())
            case .sectioned(let sections): .sectioned(sections.compacted())
            }
        } catch {
            throw .invalidSnapshot(error.description)
        }
        version = 0
        bytes = document.bytes
        fingerprint = document.root.fingerprint
    }

    /// A list assembled without being read: its compact `text`, the rows standing in it, and
    /// the text's fingerprint, as reading it would give them.
    init(compact text: [UInt8], list items: JSONItems, fingerprint: Fingerprint) {
        version = 0
        bytes = text
        collection = .list(items.compacted())
        self.fingerprint = fingerprint
    }

    /// A snapshot read from JSON `text`, its collection's items read with `idKey` as it is
    /// parsed: ``FeedError/malformedJSON(_:)`` when it is not JSON,
    /// ``FeedError/invalidSnapshot(_:)`` when it is not a collection.
    public init(text: [UInt8], idKey: String) throws(FeedError) {
        try self.init(document: Self.document(text, idKey: idKey), idKey: idKey)
    }

    /// JSON `text` as a document whose collection's items are read with `idKey` as it is
    /// parsed; ``FeedError/malformedJSON(_:)`` when it is not JSON, or, `asWritten` (a
    /// client's write, not a store's text), when an object names a member twice. The
    /// document's text is compact: a text with whitespace between its tokens
    /// (pretty-printed) is read again without it, so that every answer that carries its items
    /// is compact (one line, as an event stream shares it) and no byte is kept for layout.
    public static func document(_ text: [UInt8], idKey: String, asWritten: Bool = false) throws(FeedError) -> JSONDocument {
        do throws(JSONSyntaxError) {
            let document = try JSONDocument(bytes: text, collections: .root, idKey: idKey, refusingRepeatedMembers: asWritten)
            guard !document.isCompact else { return document }
            return try JSONDocument(bytes: document.compactText, collections: .root, idKey: idKey)
        } catch {
            throw .malformedJSON(error)
        }
    }

    /// Version 0 of a feed of the shape of `collection`: the empty collection.
    public init(emptyLike collection: JSONCollection) {
        version = 0
        bytes = []
        fingerprint = Fingerprint(high: 0, low: 0)
        switch collection {
        case .list: self.collection = .list(JSONItems())
        case .sectioned: self.collection = .sectioned(JSONSections())
        }
    }

    /// The same content as version `version`.
    public func numbered(_ version: Int) -> Snapshot {
        var snapshot = self
        snapshot.version = version
        return snapshot
    }

    /// Bytes held: the text and the collection read from it, as allocated (capacity, not
    /// count: a body read in pieces may have room to spare).
    public var byteEstimate: Int {
        switch collection {
        case .list(let items): bytes.capacity + items.byteCount
        case .sectioned(let sections): bytes.capacity + sections.byteCount
        }
    }
}
