import BatchDiff

/// A sectioned collection read from JSON: its section headers, and the rows of all its
/// sections kept flat in one ``JSONItems`` (24 bytes a row that is its own identity), with
/// how many rows each section has; the differ reads it as it is (``flat``).
///
/// It reads as a collection of sections (``JSONSection``), each with its header and items.
public struct JSONSections: RandomAccessCollection, Sendable {
    /// The headers and the rows, as the differ reads them.
    public let flat: FlatCollection<JSONSectionHeader, JSONItems>

    /// Sections `headers` whose rows are `items`, `rowCounts[s]` of them for section `s`.
    public init(headers: [JSONSectionHeader], items: JSONItems, rowCounts: [Int]) {
        flat = FlatCollection(headers: headers, items: items, rowCounts: rowCounts)
    }

    /// No sections.
    public init() { self.init(headers: [], items: JSONItems(), rowCounts: []) }

    public var startIndex: Int { 0 }
    public var endIndex: Int { flat.headers.count }

    public subscript(section: Int) -> JSONSection {
        JSONSection(header: flat.headers[section], items: JSONSection.Items(all: flat.items, rows: flat.rows(of: section)))
    }

    /// The same sections, their rows without room to spare (for sections kept long).
    public func compacted() -> JSONSections {
        JSONSections(headers: flat.headers.withUnsafeBufferPointer { Array($0) }, items: flat.items.compacted(), rowCounts: flat.rowCounts)
    }

    /// The bytes the sections hold, as allocated.
    public var byteCount: Int {
        flat.headers.capacity * MemoryLayout<JSONSectionHeader>.stride + flat.items.byteCount + (flat.headers.count + 1) * 8
    }
}

/// One section of ``JSONSections``: its header and its items.
public struct JSONSection: Sendable {
    /// The section's identity and header content; its span is the whole section's text.
    public let header: JSONSectionHeader
    /// The section's items.
    public let items: Items

    /// The items of one section: a range of the collection's rows, indexed from 0.
    public struct Items: RandomAccessCollection, Sendable {
        let all: JSONItems
        let rows: Range<Int>

        public var startIndex: Int { 0 }
        public var endIndex: Int { rows.count }
        public subscript(position: Int) -> JSONItem { all[rows.lowerBound + position] }
    }
}
