extension SectionedBatch {
    /// Applies this batch to `old` with the fill semantics of docs/batch-format.md §3 and returns the new
    /// collection: what a table shows after `performBatchUpdates` with this batch.
    ///
    /// `values` carries the new content (see ``BatchValues``). Throws ``BatchError`` when
    /// the batch does not fit `old` (counts differ, an index is out of range or named twice,
    /// a row operation names a deleted or inserted section, a reload changes identity).
    public func apply<Header, Item: Diffable>(
        to old: [Section<Header, Item>], values: BatchValues<Header, Item>
    ) throws -> [Section<Header, Item>] {
        try apply(to: old, values: values, identity: \.identity)
    }

    /// ``apply(to:values:)`` for items of any type, `identity` telling what makes two the
    /// same row (a reload never changes it).
    public func apply<Header, Item, Identity: Hashable>(
        to old: [Section<Header, Item>], values: BatchValues<Header, Item>, identity: (Item) -> Identity
    ) throws -> [Section<Header, Item>] {
        guard old.map(\.items.count) == oldCounts else {
            throw BatchError("counts.old \(oldCounts) does not match the collection \(old.map(\.items.count))")
        }
        guard values.insertedRows.count == rows.inserted.count, values.reloadedRows.count == rows.reloaded.count,
              values.insertedSections.count == sections.inserted.count, values.updatedHeaders.count == sections.updated.count
        else { throw BatchError("values are not aligned with the batch's lists") }
        let placement = try Placement(self)
        var reloads = [RowPath: Item]()
        for (path, item) in zip(rows.reloaded, values.reloadedRows) {
            guard identity(old[path.section].items[path.row]) == identity(item) else {
                throw BatchError("rows.reloaded: \(path) would change the row's identity")
            }
            reloads[path] = item
        }
        var result = try placement.sections.enumerated().map { newSection, origin -> Section<Header, Item> in
            switch origin {
            case .inserted(let k):
                let section = values.insertedSections[k]
                guard section.items.count == newCounts[newSection] else {
                    throw BatchError("counts.new: inserted section \(newSection) has \(section.items.count) rows, not \(newCounts[newSection])")
                }
                return section
            case .old(let oldSection):
                let items = placement.rows[newSection]!.map { origin -> Item in
                    switch origin {
                    case .inserted(let k): return values.insertedRows[k]
                    case .old(let path): return reloads[path] ?? old[path.section].items[path.row]
                    }
                }
                return Section(header: old[oldSection].header, items: items)
            }
        }
        for (newSection, header) in zip(sections.updated, values.updatedHeaders) {
            guard result.indices.contains(newSection), case .old = placement.sections[newSection] else {
                throw BatchError("sections.updated: \(newSection) is not a section that stays or moves")
            }
            result[newSection].header = header
        }
        return result
    }
}

extension ListBatch {
    /// Applies this batch to the list `old` with the fill semantics of docs/batch-format.md §3 and returns
    /// the new list. Throws ``BatchError`` when the batch does not fit `old`.
    public func apply<Item: Diffable>(to old: [Item], values: BatchValues<ListHeader, Item>) throws -> [Item] {
        try apply(to: old, values: values, identity: \.identity)
    }

    /// ``apply(to:values:)`` for items of any type, `identity` telling what makes two the
    /// same row.
    public func apply<Header, Item, Identity: Hashable>(
        to old: [Item], values: BatchValues<Header, Item>, identity: (Item) -> Identity
    ) throws -> [Item] {
        guard values.insertedSections.isEmpty, values.updatedHeaders.isEmpty else { throw BatchError("a list has no section values") }
        let rows = BatchValues<ListHeader, Item>(insertedRows: values.insertedRows, reloadedRows: values.reloadedRows)
        return try sectioned.apply(to: [Section(header: ListHeader(), items: old)], values: rows, identity: identity)[0].items
    }
}
