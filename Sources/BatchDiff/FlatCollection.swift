/// A sectioned collection as the differ reads it: the section headers, and all rows
/// flattened into one sequence of elements, with how many rows each section has.
///
/// Diffing ``Section`` arrays makes one; a caller that keeps its rows flat already (column
/// by column, say) makes one with ``init(headers:items:rowCounts:)`` and copies nothing.
public struct FlatCollection<Header, Items: DiffableElements> {
    /// The section headers, in order.
    public let headers: [Header]
    /// Every row, the sections' rows one after the other.
    public let items: Items
    @usableFromInline let shape: CollectionShape

    /// Sections `headers` whose rows are `items`, `rowCounts[s]` of them for section `s`;
    /// the counts add up to `items.count`.
    @inlinable
    public init(headers: [Header], items: Items, rowCounts: [Int]) {
        precondition(headers.count == rowCounts.count && rowCounts.reduce(0, +) == items.count, "one row count a header, adding up to the rows")
        self.headers = headers
        self.items = items
        shape = CollectionShape(rowCounts: rowCounts)
    }

    /// Sections as they are: their rows are read where they lie (``SectionRows``).
    @inlinable
    init<Item: Diffable>(sections: [Section<Header, Item>]) where Items == SectionRows<Header, Item> {
        headers = sections.map(\.header)
        shape = CollectionShape(rowCounts: sections.lazy.map(\.items.count))
        items = SectionRows(sections: sections, shape: shape)
    }

    /// A list, as a collection of one section.
    @inlinable
    init(list: Items, header: Header) {
        headers = [header]
        items = list
        shape = CollectionShape(rowCounts: [list.count])
    }

    /// How many rows each section has.
    public var rowCounts: [Int] { shape.counts }

    /// The positions in ``items`` of the rows of section `section`.
    @inlinable
    public func rows(of section: Int) -> Range<Int> { shape.rows(of: section) }
}

extension FlatCollection: Sendable where Header: Sendable, Items: Sendable {}
