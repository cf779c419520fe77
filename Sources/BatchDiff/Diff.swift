/// The batch that turns the sectioned collection `old` into `new`.
///
/// Sections and rows are matched by identity (repeats paired in order of appearance; without
/// moves, a section's rows paired to keep the most in place) in expected linear time plus a
/// longest increasing subsequence; the moves are as few as the matching allows. The batch
/// never holds a combination that crashes UIKit (see ``SectionedBatch``).
@inlinable
public func batch<Header: Diffable, Item: Diffable>(
    from old: [Section<Header, Item>], to new: [Section<Header, Item>], options: DiffOptions = DiffOptions()
) -> SectionedBatch {
    SectionedDiffer(old: FlatCollection(sections: old), new: FlatCollection(sections: new), options: options).batch()
}

/// The batch that turns the sectioned collection `old` into `new`, both with their rows
/// kept flat (see ``FlatCollection``); the same batch as for their sections.
@inlinable
public func batch<Header: Diffable, Items: DiffableElements>(
    from old: FlatCollection<Header, Items>, to new: FlatCollection<Header, Items>, options: DiffOptions = DiffOptions()
) -> SectionedBatch {
    SectionedDiffer(old: old, new: new, options: options).batch()
}

/// The batch that turns the list `old` into `new`: arrays, or other ``DiffableElements``
/// (such as lists that keep their elements column by column).
@inlinable
public func batch<Items: DiffableElements>(from old: Items, to new: Items, options: DiffOptions = DiffOptions()) -> ListBatch {
    let sectioned = SectionedDiffer(
        old: FlatCollection(list: old, header: ListHeader()),
        new: FlatCollection(list: new, header: ListHeader()),
        options: options
    ).batch()
    return ListBatch(rows: sectioned.rows.map(\.row), oldCount: old.count, newCount: new.count)
}

/// The header of the one section a list is diffed and applied as.
public struct ListHeader: Diffable, Hashable, Sendable {
    @inlinable public var identity: Int { 0 }
    @inlinable public init() {}
}
