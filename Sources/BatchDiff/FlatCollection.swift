/// A sectioned collection as the differ reads it: the section headers, and all rows
/// flattened into one array, with the collection's shape.
struct FlatCollection<Header, Item> {
    let headers: [Header]
    let items: [Item]
    let shape: CollectionShape

    init(sections: [Section<Header, Item>]) {
        headers = sections.map(\.header)
        items = sections.count == 1 ? sections[0].items : sections.flatMap(\.items)
        shape = CollectionShape(rowCounts: sections.lazy.map(\.items.count))
    }

    /// A list, as a collection of one section.
    init(list: [Item], header: Header) {
        headers = [header]
        items = list
        shape = CollectionShape(rowCounts: [list.count])
    }
}
