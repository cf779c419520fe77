/// The new content a batch needs to be applied, aligned one-to-one with the batch's lists:
/// `insertedRows[k]` is the row inserted at `rows.inserted[k]`, and so on.
public struct BatchValues<Header, Item> {
    /// The items of `rows.inserted`, in the same order.
    public var insertedRows: [Item]
    /// The new content of the items of `rows.reloaded`, in the same order.
    public var reloadedRows: [Item]
    /// The whole sections of `sections.inserted`, in the same order.
    public var insertedSections: [Section<Header, Item>]
    /// The new headers of `sections.updated`, in the same order.
    public var updatedHeaders: [Header]

    public init(
        insertedRows: [Item] = [], reloadedRows: [Item] = [],
        insertedSections: [Section<Header, Item>] = [], updatedHeaders: [Header] = []
    ) {
        self.insertedRows = insertedRows
        self.reloadedRows = reloadedRows
        self.insertedSections = insertedSections
        self.updatedHeaders = updatedHeaders
    }
}

extension BatchValues: Sendable where Header: Sendable, Item: Sendable {}

extension SectionedBatch {
    /// The values this batch needs, taken from `new`, the collection it leads to.
    public func values<Header, Item>(from new: [Section<Header, Item>]) throws -> BatchValues<Header, Item> {
        guard new.map(\.items.count) == newCounts else {
            throw BatchError("counts.new \(newCounts) does not match the collection \(new.map(\.items.count))")
        }
        return try values(
            row: { new[$0.section].items[$0.row] },
            insertedSections: sections.inserted.map { new[$0] }, updatedHeaders: sections.updated.map { new[$0].header }
        )
    }

    /// The values this batch needs, taken from `new`, the collection it leads to, its rows
    /// kept flat.
    public func values<Header, Items: DiffableElements>(from new: FlatCollection<Header, Items>) throws -> BatchValues<Header, Items.Element> {
        guard new.rowCounts == newCounts else {
            throw BatchError("counts.new \(newCounts) does not match the collection \(new.rowCounts)")
        }
        return try values(
            row: { new.items.element(at: new.rows(of: $0.section).lowerBound + $0.row) },
            insertedSections: sections.inserted.map { Section(header: new.headers[$0], items: new.rows(of: $0).map(new.items.element(at:))) },
            updatedHeaders: sections.updated.map { new.headers[$0] }
        )
    }

    /// The values, the new collection's rows read with `row`.
    fileprivate func values<Header, Item>(
        row: (RowPath) -> Item, insertedSections: [Section<Header, Item>], updatedHeaders: [Header]
    ) throws -> BatchValues<Header, Item> {
        let placement = try Placement(self)
        return BatchValues(
            insertedRows: rows.inserted.map(row), reloadedRows: placement.newPaths(of: rows.reloaded).map(row),
            insertedSections: insertedSections, updatedHeaders: updatedHeaders
        )
    }
}

extension SectionedBatch {
    /// For each of `sections.updated` (new indexes), the index the section had in the old
    /// collection.
    public func oldIndexesOfUpdatedSections() throws -> [Int] {
        let placement = try Placement(self)
        return try sections.updated.map { newSection in
            guard placement.sections.indices.contains(newSection), case .old(let oldSection) = placement.sections[newSection] else {
                throw BatchError("sections.updated: \(newSection) is not a section that stays or moves")
            }
            return oldSection
        }
    }
}

extension ListBatch {
    /// The values this batch needs, taken from `new`, the list it leads to (an array, or
    /// other ``DiffableElements``).
    public func values<Items: DiffableElements>(from new: Items) throws -> BatchValues<ListHeader, Items.Element> {
        guard new.count == newCount else { throw BatchError("counts.new \([newCount]) does not match the collection \([new.count])") }
        return try sectioned.values(row: { new.element(at: $0.row) }, insertedSections: [], updatedHeaders: [])
    }
}
