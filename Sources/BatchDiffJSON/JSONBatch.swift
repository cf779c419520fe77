import BatchDiff

/// The batch between two JSON collections of the same shape.
public enum JSONBatch: Sendable {
    case list(ListBatch)
    case sectioned(SectionedBatch)

    /// Diffs `old` into `new`. Throws when one is a list and the other sectioned.
    public init(from old: JSONCollection, to new: JSONCollection, options: DiffOptions) throws(CollectionShapeError) {
        switch (old, new) {
        case (.list(let old), .list(let new)):
            self = .list(batch(from: old, to: new, options: options))
        case (.sectioned(let old), .sectioned(let new)):
            self = .sectioned(batch(from: old.flat, to: new.flat, options: options))
        default:
            throw CollectionShapeError(path: "new", reason: "is \(new.shapeName) but old is \(old.shapeName); both must have the same shape")
        }
    }

    /// The batch that leaves `collection` as it is: no operations, its counts on both sides.
    public static func unchanged(_ collection: JSONCollection) -> JSONBatch {
        switch collection {
        case .list(let items):
            .list(ListBatch(rows: RowChanges(), oldCount: items.count, newCount: items.count))
        case .sectioned(let sections):
            .sectioned(SectionedBatch(sections: SectionChanges(), rows: RowChanges(), oldCounts: sections.flat.rowCounts, newCounts: sections.flat.rowCounts))
        }
    }

}
