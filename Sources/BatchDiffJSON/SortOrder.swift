/// An order of rows by members they carry, as `orderBy=-score,id` writes it (docs/feeds.md
/// §14): each key a top-level member's name, descending when written with a leading `-`.
/// Key values compare as ``SortKey`` says; what breaks the ties is the caller's (a feed's
/// rows: their identity).
public struct SortOrder: Hashable, Sendable, CustomStringConvertible {
    /// One key: a member's name, and whether larger values come first.
    public struct Key: Hashable, Sendable {
        public let member: String
        public let descending: Bool
        /// The name's UTF-8 bytes, as a scanner compares them with a member's.
        let name: [UInt8]

        init(member: String, descending: Bool) {
            self.member = member
            self.descending = descending
            name = Array(member.utf8)
        }
    }

    /// The keys, the first deciding first.
    public let keys: [Key]

    /// The most keys an order may have.
    public static let maxKeys = 8

    /// The order `text` writes: names separated by commas, each 1 to 128 bytes, `-` before a
    /// descending one; 1 to ``maxKeys`` keys, none named twice.
    public init(parsing text: String) throws(SortOrderError) {
        guard !text.isEmpty else { throw SortOrderError("names no member") }
        var keys: [Key] = []
        for written in text.split(separator: ",", omittingEmptySubsequences: false) {
            let descending = written.hasPrefix("-")
            let member = String(descending ? written.dropFirst() : written)
            guard (1...128).contains(member.utf8.count) else {
                throw SortOrderError("\(String(written).debugDescription): a member's name is 1 to 128 bytes")
            }
            guard !keys.contains(where: { $0.member == member }) else { throw SortOrderError("names \(member.debugDescription) twice") }
            keys.append(Key(member: member, descending: descending))
        }
        guard keys.count <= Self.maxKeys else { throw SortOrderError("names \(keys.count) members; at most \(Self.maxKeys)") }
        self.keys = keys
    }

    /// The order as it is written: `-score,id`.
    public var description: String {
        keys.map { ($0.descending ? "-" : "") + $0.member }.joined(separator: ",")
    }

    /// How the key values `left` and `right` (of this order's keys, in order) compare:
    /// negative when `left` comes first, zero when they tie.
    public func compare(_ left: [SortKey], _ right: [SortKey]) -> Int {
        for (index, key) in keys.enumerated() {
            let order = SortKey.compare(left[index], right[index])
            if order != 0 { return key.descending ? -order : order }
        }
        return 0
    }

    /// The values of this order's keys in the row whose JSON text is `row` (a member it does
    /// not have, or a row that is not an object, counts as `null`).
    public func keys(of row: ArraySlice<UInt8>) throws(SortKeyError) -> [SortKey] {
        var values: [SortKey] = []
        try keys(scanned: JSONMemberScanner.values(of: keys.map(\.name), in: row), into: &values)
        return values
    }

    /// The values of this order's keys from the texts of their members (the first of
    /// `scanned`, in the keys' order; `nil` for a member the row lacks), written into
    /// `values` (its room kept from one row to the next).
    func keys(scanned: [ArraySlice<UInt8>?], into values: inout [SortKey]) throws(SortKeyError) {
        values.removeAll(keepingCapacity: true)
        for (key, text) in zip(keys, scanned) {
            guard let text else {
                values.append(.null)
                continue
            }
            guard let value = SortKey(text: text) else {
                throw SortKeyError(member: key.member, kind: text.first == UInt8(ascii: "[") ? "an array" : "an object")
            }
            values.append(value)
        }
    }
}

/// An `orderBy` that does not read.
public struct SortOrderError: Error, Sendable, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// A row whose key member holds what no order compares: an array or an object.
public struct SortKeyError: Error, Sendable, CustomStringConvertible {
    /// The key's member.
    public let member: String
    /// What it holds: "an array" or "an object".
    public let kind: String

    public var description: String { "its \(member.debugDescription) is \(kind), which does not sort" }
}
