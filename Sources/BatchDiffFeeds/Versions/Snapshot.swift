import BatchDiff
import BatchDiffJSON
import Synchronization

/// A version of a feed: its JSON text, the collection read from it and the fingerprint of
/// the text's canonical form (equal snapshots make no new version).
///
/// A version a patch made is kept as the version it was made from and the change of text
/// that makes it (``PatchedText``), and written whole only when something reads it whole
/// (``bytes``, ``collection``, ``fingerprint``): so a patch costs what it changed.
package struct Snapshot: Sendable {
    /// The version number; 0 until the snapshot is stored.
    package private(set) var version: Int
    /// The length of the text, known without writing it.
    package let textCount: Int
    /// Whether the collection is a list (not sectioned), known without writing it.
    package let isList: Bool
    /// Whole, or a patch's version not yet read whole (``PatchedText``).
    let storage: Storage

    enum Storage {
        case whole(Whole)
        case patched(PatchedText)
    }

    /// A version's text and what is read from it.
    struct Whole: Sendable {
        let bytes: [UInt8]
        let collection: JSONCollection
        let fingerprint: Fingerprint
    }

    /// The JSON text, as the client sent it but for the whitespace between tokens (compact).
    package var bytes: [UInt8] { whole.bytes }
    /// The collection read from the text.
    package var collection: JSONCollection { whole.collection }
    /// The fingerprint of the text's canonical form.
    package var fingerprint: Fingerprint { whole.fingerprint }

    var whole: Whole {
        switch storage {
        case .whole(let whole): whole
        case .patched(let patched): patched.whole
        }
    }

    private init(_ whole: Whole) {
        version = 0
        textCount = whole.bytes.count
        if case .list = whole.collection { isList = true } else { isList = false }
        storage = .whole(whole)
    }

    /// The collection `base` changed by `change` (a ``TextDelta`` of its text), its items
    /// read with `idKey`, of `textCount` bytes: written whole when first read.
    init(patching base: Snapshot, by change: TextDelta, textCount: Int, idKey: String) {
        version = 0
        self.textCount = textCount
        isList = base.isList
        storage = .patched(PatchedText(base: base, change: change, idKey: idKey))
    }

    /// The same content, written whole (once: it is kept for every copy).
    package var written: Snapshot {
        guard case .patched = storage else { return self }
        return Snapshot(whole).numbered(version)
    }

    /// The bytes of the changes a patched version is read through, down to a version kept
    /// whole (0 for a version kept whole, or already written).
    var chainBytes: Int {
        guard case .patched(let patched) = storage else { return 0 }
        return patched.chainBytes
    }

    /// A snapshot read from a document; ``FeedError/invalidSnapshot(_:)`` when it is not a
    /// collection (docs/batch-format.md §1.1).
    package init(document: JSONDocument, idKey: String) throws(FeedError) {
        do {
            let collection = try document.root.collection(idKey: idKey, path: "body")
            // Kept as long as the version: the rows without the room to spare that growing left.
            let kept: JSONCollection = switch collection {
            case .list(let items): .list(items.compacted())
            case .sectioned(let sections): .sectioned(sections.compacted())
            }
            self.init(Whole(bytes: document.bytes, collection: kept, fingerprint: document.root.fingerprint))
        } catch {
            throw .invalidSnapshot(error.description)
        }
    }

    /// A snapshot read from JSON `text`, its collection's items read with `idKey` as it is
    /// parsed: ``FeedError/malformedJSON(_:)`` when it is not JSON,
    /// ``FeedError/invalidSnapshot(_:)`` when it is not a collection.
    package init(text: [UInt8], idKey: String) throws(FeedError) {
        try self.init(document: Self.document(text, idKey: idKey), idKey: idKey)
    }

    /// JSON `text` as a document whose collection's items are read with `idKey` as it is
    /// parsed; ``FeedError/malformedJSON(_:)`` when it is not JSON, or, `asWritten` (a
    /// client's write, not a store's text), when an object names a member twice. The
    /// document's text is compact: a text with whitespace between its tokens
    /// (pretty-printed) is read again without it, so that every answer that carries its items
    /// is compact (one line: a framing by lines shares it as it is) and no byte is kept for layout.
    package static func document(_ text: [UInt8], idKey: String, asWritten: Bool = false) throws(FeedError) -> JSONDocument {
        do throws(JSONSyntaxError) {
            let document = try JSONDocument(bytes: text, collections: .root, idKey: idKey, refusingRepeatedMembers: asWritten)
            guard !document.isCompact else { return document }
            return try JSONDocument(bytes: document.compactText, collections: .root, idKey: idKey)
        } catch {
            throw .malformedJSON(error)
        }
    }

    /// Version 0 of a feed of the shape of `collection`: the empty collection.
    package init(emptyLike collection: JSONCollection) {
        let empty: JSONCollection = switch collection {
        case .list: .list(JSONItems())
        case .sectioned: .sectioned(JSONSections())
        }
        self.init(Whole(bytes: [], collection: empty, fingerprint: Fingerprint(high: 0, low: 0)))
    }

    /// The same content as version `version`.
    package func numbered(_ version: Int) -> Snapshot {
        var snapshot = self
        snapshot.version = version
        return snapshot
    }

    /// Bytes held: the text and the collection read from it, as allocated (capacity, not
    /// count: a body read in pieces may have room to spare); for a patched version not yet
    /// written whole, the version it is read from and the changes.
    package var byteEstimate: Int {
        switch storage {
        case .whole(let whole): whole.byteEstimate
        case .patched(let patched): patched.byteEstimate
        }
    }
}

extension Snapshot.Whole {
    var byteEstimate: Int {
        switch collection {
        case .list(let items): bytes.capacity + items.byteCount
        case .sectioned(let sections): bytes.capacity + sections.byteCount
        }
    }
}

extension Snapshot {
    /// This snapshot with its rows (within each section) and sections in `order`, keys read
    /// from its text (itself when they are in it already: no sort, no copy);
    /// ``FeedError/invalidSortKey(_:)`` for an element whose key does not sort, and
    /// ``FeedError/invalidSnapshot(_:)`` for sections ordered in a list.
    func sorted(_ order: CollectionOrder, idKey: String) throws(FeedError) -> Snapshot {
        guard !order.isEmpty else { return self }
        if order.sections != nil, case .list = collection {
            throw .invalidSnapshot("body: the feed's sections are ordered (sectionOrderBy), and this snapshot is a list")
        }
        let sorted: JSONCollection?
        do throws(CollectionSortError) {
            sorted = try collection.sorted(order, idKey: idKey, text: bytes, path: "body")
        } catch {
            throw .invalidSortKey(error.description)
        }
        guard let sorted else { return self }
        return try Snapshot(text: sorted.text(from: bytes), idKey: idKey)
    }
}
