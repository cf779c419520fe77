/// The orders a collection is sorted in: its rows' (within each section) and its sections'
/// (by their headers' members); either may be absent.
public struct CollectionOrder: Hashable, Sendable {
    public var rows: SortOrder?
    public var sections: SortOrder?

    public init(rows: SortOrder? = nil, sections: SortOrder? = nil) {
        self.rows = rows
        self.sections = sections
    }

    /// Whether it orders nothing.
    public var isEmpty: Bool { rows == nil && sections == nil }
}

/// A row (or section) of a collection being sorted whose key holds what does not sort.
public struct CollectionSortError: Error, Sendable, CustomStringConvertible {
    /// Where the element is, as `old[3]` or `new.sections[1].items[0]`.
    public let path: String
    /// What its key holds.
    public let reason: SortKeyError

    public var description: String { "\(path): \(reason)" }
}

extension JSONCollection {
    /// This collection with its rows (within each section) and sections in `order`, keys
    /// read from `text` (where the elements' spans are); `nil` when it is in order already
    /// (one pass over neighbours finds it: no sort). Elements that tie on their keys stand as
    /// ``SortPlace`` says (a section by its header: its text with its `items` empty): the
    /// same in every process. Spans are unchanged. `path` names the collection in errors.
    public func sorted(_ order: CollectionOrder, idKey: String, text: [UInt8], path: String) throws(CollectionSortError) -> JSONCollection? {
        switch self {
        case .list(let items):
            guard let rows = order.rows,
                  let positions = try Self.sortedPositions(
                      of: items.lazy.map { text[$0.span] }, by: SortPlace.Reader(order: rows, idKey: idKey), path: { "\(path)[\($0)]" }
                  )
            else { return nil }
            return .list(JSONItems(positions.lazy.map { items[$0] }))
        case .sectioned(let sections):
            let sectionOrder = try order.sections.flatMap { (sectionOrder) throws(CollectionSortError) in
                try Self.sortedPositions(
                    of: sections.map { $0.headerText(in: text)[...] }, by: SortPlace.Reader(order: sectionOrder, idKey: idKey),
                    path: { "\(path).sections[\($0)]" }
                )
            }
            var rowOrders: [[Int]?] = []
            if let rows = order.rows {
                let reader = SortPlace.Reader(order: rows, idKey: idKey)
                for (index, section) in sections.enumerated() {
                    rowOrders.append(try Self.sortedPositions(
                        of: section.items.lazy.map { text[$0.span] }, by: reader, path: { "\(path).sections[\(index)].items[\($0)]" }
                    ))
                }
            }
            guard sectionOrder != nil || rowOrders.contains(where: { $0 != nil }) else { return nil }
            var headers: [JSONSectionHeader] = []
            var items = JSONItems()
            items.reserveCapacity(sections.flat.items.count)
            var rowCounts: [Int] = []
            for index in sectionOrder ?? Array(sections.indices) {
                let section = sections[index]
                headers.append(section.header)
                let positions = rowOrders.isEmpty ? nil : rowOrders[index]
                for position in positions ?? Array(section.items.indices) { items.append(section.items[position]) }
                rowCounts.append(section.items.count)
            }
            return .sectioned(JSONSections(headers: headers, items: items, rowCounts: rowCounts))
        }
    }

    /// The positions of the elements whose texts are `texts` in the order `reader` reads
    /// (``SortPlace``); `nil` when they are in order already: one pass, each element's place
    /// compared with the one before and let go, so an ordered collection costs no sort and
    /// holds no places (past the first out of order, every place is read and sorted).
    private static func sortedPositions(
        of texts: some Collection<ArraySlice<UInt8>>, by reader: SortPlace.Reader, path: (Int) -> String
    ) throws(CollectionSortError) -> [Int]? {
        func place(_ offset: Int, _ text: ArraySlice<UInt8>) throws(CollectionSortError) -> SortPlace {
            do throws(SortKeyError) {
                return try reader.place(of: text)
            } catch {
                throw CollectionSortError(path: path(offset), reason: error)
            }
        }
        var (previous, current) = (SortPlace(keys: [], identity: nil, text: []), SortPlace(keys: [], identity: nil, text: []))
        var scanned: [ArraySlice<UInt8>?] = []
        var inOrder = true
        for (offset, text) in texts.enumerated() {
            do throws(SortKeyError) {
                try reader.read(text, into: &current, scanned: &scanned)
            } catch {
                throw CollectionSortError(path: path(offset), reason: error)
            }
            if offset > 0, reader.compare(previous, current) > 0 {
                inOrder = false
                break
            }
            swap(&previous, &current)
        }
        guard !inOrder else { return nil }
        var places: [SortPlace] = []
        places.reserveCapacity(texts.count)
        for (offset, text) in texts.enumerated() { places.append(try place(offset, text)) }
        // Sorted by the first key's prefix (a number beside the position: no place is read
        // or copied), places compared only where prefixes tie.
        let descending = reader.order.keys[0].descending
        var entries = places.indices.map { (prefix: places[$0].keys[0].orderPrefix, position: $0) }
        if descending { entries.withUnsafeMutableBufferPointer { for index in $0.indices { $0[index].prefix = ~$0[index].prefix } } }
        places.withUnsafeBufferPointer { places in
            entries.sort { left, right in
                if left.prefix != right.prefix { return left.prefix < right.prefix }
                let order = reader.compare(places[left.position], places[right.position])
                return order != 0 ? order < 0 : left.position < right.position
            }
        }
        return entries.map(\.position)
    }
}

extension JSONSection {
    /// Where its `items` array stands in the compact `text` its spans point into: around
    /// its rows' spans, in whatever order its rows stand now; read from the section's text
    /// (the first `items` member's value) when it has no rows; `nil` when it has none.
    public func itemsArraySpan(in text: [UInt8]) -> Range<Int>? {
        if let first = items.lazy.map(\.span.lowerBound).min(), let last = items.lazy.map(\.span.upperBound).max() {
            return first - 1..<last + 1
        }
        return JSONMemberScanner.values(of: [Self.itemsName], in: text[header.span])[0].map { $0.startIndex..<$0.endIndex }
    }

    private static let itemsName = Array("items".utf8)

    /// Its header's text: its own with its `items` empty (`[]`), from the compact `text` its
    /// spans point into.
    func headerText(in text: [UInt8]) -> [UInt8] {
        guard let items = itemsArraySpan(in: text) else { return Array(text[header.span]) }
        return Array(text[header.span.lowerBound..<items.lowerBound]) + Array("[]".utf8) + Array(text[items.upperBound..<header.span.upperBound])
    }
}
