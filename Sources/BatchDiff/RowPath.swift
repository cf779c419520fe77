/// The position of a row in a sectioned collection (UIKit's `IndexPath`), ordered by section, then row.
public struct RowPath: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var section: Int
    public var row: Int

    @inlinable
    public init(section: Int, row: Int) {
        self.section = section
        self.row = row
    }

    @inlinable
    public static func < (lhs: RowPath, rhs: RowPath) -> Bool {
        (lhs.section, lhs.row) < (rhs.section, rhs.row)
    }

    public var description: String { "[\(section), \(row)]" }
}

/// A move of an element from a position in the old collection to one in the new collection.
public struct Move<Index: Hashable & Sendable>: Hashable, Sendable {
    /// The position in the old collection.
    public var from: Index
    /// The position in the new collection.
    public var to: Index

    @inlinable
    public init(from: Index, to: Index) {
        self.from = from
        self.to = to
    }
}
