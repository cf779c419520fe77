import BatchDiff

extension FeedChanges {
    /// The collection at version ``to``: `old` (the collection at version ``from``; `nil`
    /// when the client starts from nothing, version 0) with this answer applied, as a table
    /// shows it after the batch (docs/batch-format.md §3).
    ///
    /// `identity` says what makes two items the same row. Throws ``BatchError`` when the
    /// answer does not fit `old` (counts that differ, a shape that differs, an index out of
    /// range, a reload that changes a row's identity): never a wrong collection.
    public func applied<Identity: Hashable>(
        to old: FeedCollection<Header, Item>?, identity: (Item) -> Identity
    ) throws -> FeedCollection<Header, Item> {
        switch (update, old) {
        case (.reload, _):
            guard let data else { throw BatchError("a reload without data") }
            return data
        case (.list(let batch), .list(let items)?):
            return .list(try batch.apply(to: items, values: try requiredValues(), identity: identity))
        case (.list(let batch), nil):
            return .list(try batch.apply(to: [], values: try requiredValues(), identity: identity))
        case (.sectioned(let batch), .sectioned(let sections)?):
            return .sectioned(try batch.apply(to: sections, values: try requiredValues(), identity: identity))
        case (.sectioned(let batch), nil):
            return .sectioned(try batch.apply(to: [], values: try requiredValues(), identity: identity))
        default:
            throw BatchError("the answer is for \(update.shapeName); the collection held is \(old!.shapeName)")
        }
    }

    private func requiredValues() throws -> BatchValues<Header, Item> {
        guard let values else { throw BatchError("a batch without values") }
        return values
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
