/// A sectioned collection as the differ reads it: the section headers, and all rows
/// flattened into one array with the offset where each section's rows start.
struct FlatCollection<Header, Item> {
    let headers: [Header]
    let items: [Item]
    /// `starts[s]..<starts[s + 1]` are the rows of section `s`.
    private let starts: [Int]

    init(sections: [Section<Header, Item>]) {
        headers = sections.map(\.header)
        var starts = [0]
        starts.reserveCapacity(sections.count + 1)
        for section in sections { starts.append(starts[starts.count - 1] + section.items.count) }
        self.starts = starts
        items = sections.count == 1 ? sections[0].items : sections.flatMap(\.items)
    }

    /// A list, as a collection of one section.
    init(list: [Item], header: Header) {
        headers = [header]
        items = list
        starts = [0, list.count]
    }

    /// The flat indexes of the rows of `section`.
    func rows(of section: Int) -> Range<Int> { starts[section]..<starts[section + 1] }

    /// The index path of the row at flat index `index` in `section`.
    func path(of index: Int, in section: Int) -> IndexPath {
        IndexPath(section: section, row: index - starts[section])
    }

    /// The index path of the row at flat index `index`.
    func path(of index: Int) -> IndexPath {
        var low = 0
        var high = headers.count - 1
        while low < high {  // the last section starting at or before `index` that is not empty
            let middle = (low + high + 1) / 2
            if starts[middle] <= index { low = middle } else { high = middle - 1 }
        }
        while starts[low + 1] <= index { low += 1 }
        return path(of: index, in: low)
    }

    /// The number of rows of each section.
    var counts: [Int] { headers.indices.map { starts[$0 + 1] - starts[$0] } }
}
