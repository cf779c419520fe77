/// A sectioned collection as the differ reads it: the section headers, and all rows
/// flattened into one array, with the collection's shape.
@usableFromInline
struct FlatCollection<Header, Item> {
    @usableFromInline let headers: [Header]
    @usableFromInline let items: [Item]
    @usableFromInline let shape: CollectionShape

    @inlinable
    init(sections: [Section<Header, Item>]) {
        headers = sections.map(\.header)
        items = sections.count == 1 ? sections[0].items : sections.flatMap(\.items)
        shape = CollectionShape(rowCounts: sections.lazy.map(\.items.count))
    }

    /// A list, as a collection of one section.
    @inlinable
    init(list: [Item], header: Header) {
        headers = [header]
        items = list
        shape = CollectionShape(rowCounts: [list.count])
    }
}
