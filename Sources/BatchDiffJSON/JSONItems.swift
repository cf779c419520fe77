import BatchDiff

/// The items of a list read from JSON, kept column by column so that a list of millions of
/// small values stays small: each item's content fingerprint and span (24 bytes), and its
/// identity only once some item's identity differs from its content (an object with the
/// identity member). A list of scalars, or of objects without that member, keeps no
/// identities at all.
///
/// It reads as a collection of ``JSONItem``, indexed from 0, and the differ reads it as is.
public struct JSONItems: RandomAccessCollection, DiffableElements, Sendable {
    /// What every item keeps: its content and where its text stands.
    @usableFromInline
    struct Row: Sendable {
        @usableFromInline let content: Fingerprint
        @usableFromInline let start: Int32
        @usableFromInline let end: Int32
    }

    @usableFromInline private(set) var rows: [Row] = []
    /// Every item's identity, or empty while each item is its own identity.
    @usableFromInline private(set) var identities: [Fingerprint] = []

    /// No items.
    public init() {}

    /// The items of `items`, in order.
    public init(_ items: some Sequence<JSONItem>) {
        rows.reserveCapacity(items.underestimatedCount)
        for item in items { append(item) }
    }

    /// Adds `item` at the end.
    public mutating func append(_ item: JSONItem) {
        if !identities.isEmpty || item.identity != item.content {
            if identities.isEmpty {
                // The first item identified by a member: the items before it are their own identity.
                identities.reserveCapacity(rows.capacity)
                identities.append(contentsOf: rows.lazy.map(\.content))
            }
            identities.append(item.identity)
        }
        rows.append(Row(content: item.content, start: item.start, end: item.end))
    }

    /// How many items fit before the columns must grow.
    public var capacity: Int { rows.capacity }

    /// Makes room for `count` items in all, so none of the columns grows (and copies itself) before then.
    public mutating func reserveCapacity(_ count: Int) {
        rows.reserveCapacity(count)
        if !identities.isEmpty { identities.reserveCapacity(count) }
    }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { rows.count }

    @inlinable
    public subscript(position: Int) -> JSONItem {
        let row = rows[position]
        return JSONItem(identity: identities.isEmpty ? row.content : identities[position], content: row.content, start: row.start, end: row.end)
    }

    @inlinable @inline(__always)
    public func element(at position: Int) -> JSONItem { self[position] }

    /// The same items, each column with at most an eighth of room to spare (for items kept
    /// long): a column read with an estimate of its room (as the parser makes) is kept as it
    /// is, not copied (a copy touches the column's size in fresh memory at every write).
    public func compacted() -> JSONItems {
        var copy = JSONItems()
        copy.rows = Self.withoutRoomToSpare(rows)
        copy.identities = Self.withoutRoomToSpare(identities)
        return copy
    }

    private static func withoutRoomToSpare<Element>(_ array: [Element]) -> [Element] {
        array.capacity - array.count > array.count / 8 ? array.withUnsafeBufferPointer { Array($0) } : array
    }

    /// The bytes the items hold, as allocated.
    public var byteCount: Int {
        rows.capacity * MemoryLayout<Row>.stride + identities.capacity * MemoryLayout<Fingerprint>.stride
    }
}
