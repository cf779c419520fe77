/// A sectioned collection as the differ reads it: the section headers, and all rows
/// flattened into one sequence of elements, with the collection's shape.
@usableFromInline
struct FlatCollection<Header, Items: DiffableElements> {
    @usableFromInline let headers: [Header]
    @usableFromInline let items: Items
    @usableFromInline let shape: CollectionShape

    @inlinable
    init<Item: Diffable>(sections: [Section<Header, Item>]) where Items == [Item] {
        headers = sections.map(\.header)
        items = sections.count == 1 ? sections[0].items : sections.flatMap(\.items)
        shape = CollectionShape(rowCounts: sections.lazy.map(\.items.count))
    }

    /// A list, as a collection of one section.
    @inlinable
    init(list: Items, header: Header) {
        headers = [header]
        items = list
        shape = CollectionShape(rowCounts: [list.count])
    }
}
