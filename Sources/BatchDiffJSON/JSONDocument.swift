/// A parsed JSON text: the original bytes plus a flat tape of nodes, one per value, in
/// document order, each with the byte span of its text and the fingerprint of its
/// canonical form (object member order ignored, `1 == 1.0`, escapes decoded).
///
/// The tape is compact and built in one pass; nothing like a Foundation object tree is made.
///
/// A document whose collections are named when it is parsed (``CollectionPlacement``)
/// keeps their items, not their values: each item is read into a ``JSONItem`` as it is
/// parsed and its values leave the tape, so the document holds 24 bytes per item (40 once
/// an item of its store has an identity member, ``JSONItems``) instead of 40 bytes per
/// value. All the sections of a collection put their items in one store.
public struct JSONDocument: Sendable {
    /// The JSON text.
    public let bytes: [UInt8]
    let nodes: [JSONNode]
    /// The rows of the collections read as the document was parsed: a list's items, or all
    /// the items of a collection's sections, one after the other.
    let rowStores: [JSONItems]
    /// Where the items of each array read as parsed are (``JSONNode/extractedArray``).
    let extractedArrays: [ExtractedArray]
    /// The identity member those items were read with.
    let extractionIdKey: Fingerprint?
    /// Whether the text holds no whitespace between its tokens (``compactText``).
    public let isCompact: Bool

    /// Parses `bytes`. Throws ``JSONSyntaxError`` with the byte offset of the first problem;
    /// with `refusingRepeatedMembers`, also for an object that names a member twice (what a
    /// request may not send; text kept from before may hold such objects, and is read).
    public init(bytes: [UInt8], maxDepth: Int = 512, refusingRepeatedMembers: Bool = false) throws(JSONSyntaxError) {
        self.bytes = bytes
        (nodes, rowStores, extractedArrays, isCompact) = try JSONParser.parse(
            bytes, maxDepth: maxDepth, collections: nil, refusingRepeatedMembers: refusingRepeatedMembers
        )
        extractionIdKey = nil
    }

    /// Parses `bytes`, reading the items of the collections at `collections` with the
    /// identity member `idKey` as it goes. ``JSONValue/collection(idKey:path:)`` then reads
    /// those collections with that `idKey` only. `refusingRepeatedMembers` as above.
    public init(
        bytes: [UInt8], maxDepth: Int = 512, collections: CollectionPlacement, idKey: String, refusingRepeatedMembers: Bool = false
    ) throws(JSONSyntaxError) {
        self.bytes = bytes
        let idKey = Fingerprint.string(idKey)
        (nodes, rowStores, extractedArrays, isCompact) = try JSONParser.parse(
            bytes, maxDepth: maxDepth, collections: (collections, idKey), refusingRepeatedMembers: refusingRepeatedMembers
        )
        extractionIdKey = idKey
    }

    /// The root value.
    public var root: JSONValue { JSONValue(document: self, index: 0) }

    /// The text without the whitespace between its tokens: the same JSON value, every
    /// string as it was (``isCompact`` texts are returned as they are). In a valid text,
    /// whitespace outside strings always stands beside punctuation or at either end, so
    /// dropping all of it changes no value.
    public var compactText: [UInt8] {
        guard !isCompact else { return bytes }
        var compact: [UInt8] = []
        compact.reserveCapacity(bytes.count)
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            } else if byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
                continue
            }
            compact.append(byte)
        }
        return compact
    }
}

/// One value of a ``JSONDocument`` on its tape.
struct JSONNode {
    var kind: ValueKind
    /// Children (array elements; for objects, keys and values alternating, so 2 per member).
    var childCount: Int32
    /// Byte span of the value's text.
    var start: Int32
    var end: Int32
    /// The index of the first node after this value's subtree.
    var next: Int32
    var fingerprint: Fingerprint

    /// For the array of a collection's items read as it was parsed (its elements are not on
    /// the tape), where those items are: its index in ``JSONDocument/extractedArrays``.
    var extractedArray: Int? { childCount < 0 ? Int(-childCount - 1) : nil }
}

/// Where the items of an array read as it was parsed are: rows of one of the document's
/// row stores.
struct ExtractedArray {
    let store: Int
    let rows: Range<Int>
}

/// Where a document holds the collections to read as it is parsed.
public enum CollectionPlacement: Sendable {
    /// The document is a collection (a feed's snapshot).
    case root
    /// The root object's members of these names are collections (`old` and `new` of `POST /diff`).
    case rootMembers([String])
}

/// A value inside a ``JSONDocument``: a cheap reference (document plus node index).
public struct JSONValue: Sendable {
    let document: JSONDocument
    let index: Int

    private var node: JSONNode { document.nodes[index] }

    /// The fingerprint of the value's canonical form.
    public var fingerprint: Fingerprint { node.fingerprint }

    /// The byte span of the value's text in the document.
    public var span: Range<Int> { Int(node.start)..<Int(node.end) }

    var kind: ValueKind { node.kind }
    public var isArray: Bool { kind == .array }
    public var isObject: Bool { kind == .object }

    /// The elements of an array (empty for other kinds, and for a collection's items read
    /// as the document was parsed: ``collection(idKey:path:)`` has those).
    public var elements: [JSONValue] {
        guard kind == .array, node.extractedArray == nil else { return [] }
        var result: [JSONValue] = []
        result.reserveCapacity(Int(node.childCount))
        var child = index + 1
        for _ in 0..<node.childCount {
            result.append(JSONValue(document: document, index: child))
            child = Int(document.nodes[child].next)
        }
        return result
    }

    /// The members of an object, keys with their values, in document order (empty for other kinds).
    public var members: [(key: JSONValue, value: JSONValue)] {
        guard kind == .object else { return [] }
        var result: [(key: JSONValue, value: JSONValue)] = []
        result.reserveCapacity(Int(node.childCount) / 2)
        var child = index + 1
        for _ in 0..<(node.childCount / 2) {
            let value = child + 1  // a key is a string: it has no children
            result.append((JSONValue(document: document, index: child), JSONValue(document: document, index: value)))
            child = Int(document.nodes[value].next)
        }
        return result
    }

    func member(withKey key: Fingerprint) -> JSONValue? {
        members.first { $0.key.fingerprint == key }?.value
    }

    /// The value of this object's first member named `name`, if it has one.
    public func member(named name: String) -> JSONValue? {
        member(withKey: Fingerprint.string(name))
    }

    /// The value as a string, if it is one.
    public var string: String? {
        guard kind == .string else { return nil }
        return try? JSONParser.decodeString(document.bytes, span: span)
    }

    /// The value as an integer, if it is a number written as one (no fraction, no exponent)
    /// that fits in an `Int`.
    public var integer: Int? {
        guard kind == .number else { return nil }
        return Int(String(decoding: text, as: UTF8.self))
    }

    /// The value as a floating-point number, if it is a number (the nearest `Double`).
    public var double: Double? {
        guard kind == .number else { return nil }
        return Double(String(decoding: text, as: UTF8.self))
    }

    /// The value as a Boolean, if it is one.
    public var bool: Bool? {
        switch kind {
        case .true: true
        case .false: false
        default: nil
        }
    }

    /// The text of the value, as it stands in the document.
    public var text: ArraySlice<UInt8> { document.bytes[span] }

    /// A short name of the value's kind, for messages ("an array", "a string", ...).
    public var kindName: String {
        switch kind {
        case .null: "null"
        case .false, .true: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
