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
        try checkNewCounts(new.map(\.items.count))
        let rows = try newRows { new[$0.section].items[$0.row] }
        return BatchValues(
            insertedRows: rows.inserted, reloadedRows: rows.reloaded,
            insertedSections: sections.inserted.map { new[$0] }, updatedHeaders: sections.updated.map { new[$0].header }
        )
    }

    /// The values this batch needs, taken from `new`, the collection it leads to, its rows
    /// kept flat: an inserted section is given by its header, its rows staying in `new`.
    public func values<Header, Items: DiffableElements>(from new: FlatCollection<Header, Items>) throws -> FlatBatchValues<Header, Items.Element> {
        try checkNewCounts(new.rowCounts)
        let rows = try newRows { new.items.element(at: new.rows(of: $0.section).lowerBound + $0.row) }
        return FlatBatchValues(
            insertedRows: rows.inserted, reloadedRows: rows.reloaded,
            insertedHeaders: sections.inserted.map { new.headers[$0] }, updatedHeaders: sections.updated.map { new.headers[$0] }
        )
    }

    /// Throws unless `counts`, the new collection's rows per section, are `newCounts`.
    fileprivate func checkNewCounts(_ counts: [Int]) throws {
        guard counts == newCounts else { throw BatchError("counts.new \(newCounts) does not match the collection \(counts)") }
    }

    /// The new rows this batch inserts and reloads, read with `row`, once its placement shows
    /// that it fits the new collection (the sections it names included).
    fileprivate func newRows<Item>(_ row: (RowPath) -> Item) throws -> (inserted: [Item], reloaded: [Item]) {
        let placement = try Placement(self)
        if let section = sections.updated.first(where: { !placement.sections.indices.contains($0) }) {
            throw BatchError("sections.updated: \(section) is outside the new collection")
        }
        return (rows.inserted.map(row), placement.newPaths(of: rows.reloaded).map(row))
    }
}

/// The new content a batch needs, taken from a collection whose rows are kept flat
/// (``FlatCollection``): as ``BatchValues``, but each inserted section is given by its
/// header, so that its rows are not copied out.
public struct FlatBatchValues<Header, Item> {
    /// The items of `rows.inserted`, in the same order.
    public var insertedRows: [Item]
    /// The new content of the items of `rows.reloaded`, in the same order.
    public var reloadedRows: [Item]
    /// The headers of the sections of `sections.inserted`, in the same order.
    public var insertedHeaders: [Header]
    /// The new headers of `sections.updated`, in the same order.
    public var updatedHeaders: [Header]
}

extension FlatBatchValues: Sendable where Header: Sendable, Item: Sendable {}

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

    /// For each of `rows.reloaded` (old index paths), where the row stands in the new
    /// collection: where a view reconfigures it once the batch is done.
    public func newPathsOfReloadedRows() throws -> [RowPath] {
        try Placement(self).newPaths(of: rows.reloaded)
    }
}

extension ListBatch {
    /// The values this batch needs, taken from `new`, the list it leads to (an array, or
    /// other ``DiffableElements``).
    public func values<Items: DiffableElements>(from new: Items) throws -> BatchValues<ListHeader, Items.Element> {
        let sectioned = sectioned
        try sectioned.checkNewCounts([new.count])
        let rows = try sectioned.newRows { new.element(at: $0.row) }
        return BatchValues(insertedRows: rows.inserted, reloadedRows: rows.reloaded)
    }
}
