/// Row operations of a batch, in UIKit's index rules: deletes, reloads and move sources
/// refer to the old collection; inserts and move destinations to the new one.
///
/// Every list is sorted ascending without repeats; ``moved`` is sorted by `from`.
public struct RowChanges<Index: Hashable & Comparable & Sendable>: Hashable, Sendable {
    public var deleted: [Index]
    public var inserted: [Index]
    public var reloaded: [Index]
    public var moved: [Move<Index>]

    @inlinable
    public init(deleted: [Index] = [], inserted: [Index] = [], reloaded: [Index] = [], moved: [Move<Index>] = []) {
        self.deleted = deleted
        self.inserted = inserted
        self.reloaded = reloaded
        self.moved = moved
    }

    /// Whether there is no row operation at all.
    public var isEmpty: Bool { deleted.isEmpty && inserted.isEmpty && reloaded.isEmpty && moved.isEmpty }

    /// The number of operations: each index listed and each move counts one.
    public var operationCount: Int { deleted.count + inserted.count + reloaded.count + moved.count }

    /// The same changes with every index mapped by `transform` (order is kept).
    @inlinable
    public func map<Other>(_ transform: (Index) -> Other) -> RowChanges<Other> {
        RowChanges<Other>(
            deleted: deleted.map(transform),
            inserted: inserted.map(transform),
            reloaded: reloaded.map(transform),
            moved: moved.map { Move(from: transform($0.from), to: transform($0.to)) }
        )
    }
}

/// Section operations of a batch. ``updated`` lists *new* section indexes whose header
/// content changed: the client refreshes those headers; it never implies a section reload.
public struct SectionChanges: Hashable, Sendable {
    public var deleted: [Int]
    public var inserted: [Int]
    public var updated: [Int]
    public var moved: [Move<Int>]

    public init(deleted: [Int] = [], inserted: [Int] = [], updated: [Int] = [], moved: [Move<Int>] = []) {
        self.deleted = deleted
        self.inserted = inserted
        self.updated = updated
        self.moved = moved
    }

    /// Whether there is no section operation at all.
    public var isEmpty: Bool { deleted.isEmpty && inserted.isEmpty && updated.isEmpty && moved.isEmpty }

    /// The number of operations: each index listed and each move counts one.
    public var operationCount: Int { deleted.count + inserted.count + updated.count + moved.count }
}

/// Everything one `performBatchUpdates` call needs to turn a sectioned collection into another.
public struct SectionedBatch: Hashable, Sendable {
    public var sections: SectionChanges
    public var rows: RowChanges<RowPath>
    /// Rows per section before the update; a client compares it with what it shows.
    public var oldCounts: [Int]
    /// Rows per section after the update.
    public var newCounts: [Int]

    public init(sections: SectionChanges, rows: RowChanges<RowPath>, oldCounts: [Int], newCounts: [Int]) {
        self.sections = sections
        self.rows = rows
        self.oldCounts = oldCounts
        self.newCounts = newCounts
    }

    /// Whether applying the batch changes nothing.
    public var isEmpty: Bool { sections.isEmpty && rows.isEmpty }

    /// The number of operations, sections' and rows' (docs/batch-format.md §6, `maxChanges`).
    public var operationCount: Int { sections.operationCount + rows.operationCount }
}

/// Everything one `performBatchUpdates` call needs to turn a flat list into another.
public struct ListBatch: Hashable, Sendable {
    public var rows: RowChanges<Int>
    /// The number of rows before the update.
    public var oldCount: Int
    /// The number of rows after the update.
    public var newCount: Int

    @inlinable
    public init(rows: RowChanges<Int>, oldCount: Int, newCount: Int) {
        self.rows = rows
        self.oldCount = oldCount
        self.newCount = newCount
    }

    /// Whether applying the batch changes nothing.
    public var isEmpty: Bool { rows.isEmpty }

    /// This list batch as the batch of a one-section collection.
    public var sectioned: SectionedBatch {
        SectionedBatch(
            sections: SectionChanges(),
            rows: rows.map { RowPath(section: 0, row: $0) },
            oldCounts: [oldCount],
            newCounts: [newCount]
        )
    }
}
