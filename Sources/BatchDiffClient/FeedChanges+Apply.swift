import BatchDiff

extension FeedChanges {
    /// The collection at version ``to``: `old` (the collection at version ``from``; `nil`
    /// when the client starts from nothing, version 0) with this answer applied, as a table
    /// shows it after the batch (docs/batch-format.md §3).
    ///
    /// `identity` says what makes two items the same row. A `values=merge` answer's
    /// ``mergeEntries`` are merged into the rows and headers `old` holds. Throws
    /// ``BatchError`` when the answer does not fit `old` (counts that differ, a shape that
    /// differs, an index out of range, a reload that changes a row's identity, a merge patch
    /// for a row that is not an object): never a wrong collection.
    public func applied<Identity: Hashable>(
        to old: FeedCollection<Header, Item>?, identity: (Item) -> Identity
    ) throws -> FeedCollection<Header, Item> {
        switch (update, old) {
        case (.reload, _):
            guard let data else { throw BatchError("a reload without data") }
            return data
        case (.list(let batch), .list(let items)?):
            return .list(try batch.apply(to: items, values: try requiredValues(reloaded: batch.rows.reloaded) { items[safe: $0] }, identity: identity))
        case (.list(let batch), nil):
            return .list(try batch.apply(to: [], values: try requiredValues(reloaded: batch.rows.reloaded) { _ in nil }, identity: identity))
        case (.sectioned(let batch), .sectioned(let sections)?):
            return .sectioned(try applied(batch, to: sections, identity: identity))
        case (.sectioned(let batch), nil):
            return .sectioned(try applied(batch, to: [], identity: identity))
        default:
            throw BatchError("the answer is for \(update.shapeName); the collection held is \(old!.shapeName)")
        }
    }

    /// `batch` applied to `sections`; a merge answer's headers are merged into those the
    /// sections keep once the batch has placed them (the batch applied without its updates).
    private func applied<Identity: Hashable>(
        _ batch: SectionedBatch, to sections: [Section<Header, Item>], identity: (Item) -> Identity
    ) throws -> [Section<Header, Item>] {
        let values = try requiredValues(reloaded: batch.rows.reloaded) { sections[safe: $0.section]?.items[safe: $0.row] }
        guard let headers = mergeEntries?.headers else { return try batch.apply(to: sections, values: values, identity: identity) }
        guard headers.count == batch.sections.updated.count else {
            throw BatchError("\(headers.count) header entries for \(batch.sections.updated.count) updated sections")
        }
        var placed = batch
        placed.sections.updated = []
        var result = try placed.apply(to: sections, values: values, identity: identity)
        for (section, entry) in zip(batch.sections.updated, headers) {
            guard result.indices.contains(section), !batch.sections.inserted.contains(section) else {
                throw BatchError("sections.updated: \(section) is not a kept section of the new collection")
            }
            result[section].header = try entry.value { result[section].header }
        }
        return result
    }

    /// The answer's values, a merge answer's reloaded rows merged into the rows held at
    /// `reloaded`, their old positions (`held`: the row at one, `nil` outside the collection).
    private func requiredValues<Index>(reloaded: [Index], held: (Index) -> Item?) throws -> BatchValues<Header, Item> {
        guard var values else { throw BatchError("a batch without values") }
        guard let entries = mergeEntries?.rows else { return values }
        guard entries.count == reloaded.count else { throw BatchError("\(entries.count) row entries for \(reloaded.count) reloaded rows") }
        values.reloadedRows = try zip(reloaded, entries).map { index, entry in
            try entry.value {
                guard let row = held(index) else { throw BatchError("rows.reloaded: \(index) is outside the collection held") }
                return row
            }
        }
        return values
    }
}

extension Array {
    /// The element at `index`, `nil` outside the array.
    fileprivate subscript(safe index: Int) -> Element? {
        indices.contains(index) ? self[index] : nil
    }
}

extension FeedChanges where Item: Identifiable {
    /// ``applied(to:identity:)`` with items identified by their `id`.
    public func applied(to old: FeedCollection<Header, Item>?) throws -> FeedCollection<Header, Item> {
        try applied(to: old, identity: \.id)
    }
}

extension BatchUpdate {
    /// "a list" or "a sectioned collection", for messages.
    var shapeName: String {
        switch self {
        case .list: "a list"
        case .sectioned: "a sectioned collection"
        case .reload: "a reload"
        }
    }
}

extension FeedCollection {
    /// "a list" or "a sectioned collection", for messages.
    var shapeName: String {
        switch self {
        case .list: "a list"
        case .sectioned: "a sectioned collection"
        }
    }
}
