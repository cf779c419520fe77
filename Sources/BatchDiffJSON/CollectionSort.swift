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
    /// (one pass over neighbours finds it: no sort). Elements that tie on their keys come in
    /// the order of their identity members' values (the identity's text when it is not a
    /// scalar), then of their texts' bytes: the same in every process. Spans are unchanged.
    /// `path` names the collection in errors.
    public func sorted(_ order: CollectionOrder, idKey: String, text: [UInt8], path: String) throws(CollectionSortError) -> JSONCollection? {
        switch self {
        case .list(let items):
            guard let rows = order.rows,
                  let positions = try Self.sortedPositions(of: items, order: rows, idKey: idKey, text: text, path: { "\(path)[\($0)]" })
            else { return nil }
            return .list(JSONItems(positions.lazy.map { items[$0] }))
        case .sectioned(let sections):
            let sectionOrder = try order.sections.flatMap { (sectionOrder) throws(CollectionSortError) in
                try Self.sortedPositions(of: sections.flat.headers, order: sectionOrder, idKey: idKey, text: text, path: { "\(path).sections[\($0)]" })
            }
            var rowOrders: [[Int]?] = []
            if let rows = order.rows {
                for (index, section) in sections.enumerated() {
                    rowOrders.append(try Self.sortedPositions(
                        of: section.items, order: rows, idKey: idKey, text: text, path: { "\(path).sections[\(index)].items[\($0)]" }
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

    /// The positions of `elements` in `order` (ties as ``sorted(_:idKey:text:path:)``
    /// says); `nil` when they are in order already.
    private static func sortedPositions(
        of elements: some RandomAccessCollection<JSONElement>, order: SortOrder, idKey: String, text: [UInt8], path: (Int) -> String
    ) throws(CollectionSortError) -> [Int]? {
        let identityName = [Array(idKey.utf8)]
        var keys: [(keys: [SortKey], identity: SortKey?, text: ArraySlice<UInt8>)] = []
        keys.reserveCapacity(elements.count)
        for (offset, element) in elements.enumerated() {
            let elementText = text[element.span]
            do throws(SortKeyError) {
                let identity = JSONMemberScanner.values(of: identityName, in: elementText)[0].flatMap(SortKey.init(text:))
                keys.append((try order.keys(of: elementText), identity, elementText))
            } catch {
                throw CollectionSortError(path: path(offset), reason: error)
            }
        }
        func compare(_ left: Int, _ right: Int) -> Int {
            let (a, b) = (keys[left], keys[right])
            let byKeys = order.compare(a.keys, b.keys)
            if byKeys != 0 { return byKeys }
            if let leftIdentity = a.identity, let rightIdentity = b.identity {
                let byIdentity = SortKey.compare(leftIdentity, rightIdentity)
                if byIdentity != 0 { return byIdentity }
            }
            return a.text.elementsEqual(b.text) ? 0 : a.text.lexicographicallyPrecedes(b.text) ? -1 : 1
        }
        let positions = Array(keys.indices)
        guard zip(positions, positions.dropFirst()).contains(where: { compare($0, $1) > 0 }) else { return nil }
        return positions.sorted { left, right in
            let order = compare(left, right)
            return order != 0 ? order < 0 : left < right
        }
    }
}
