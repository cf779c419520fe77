/// The rule of `uniqueIdentities` (docs/batch-format.md §1.5): no two rows of a collection,
/// across all its sections, share an identity, and no two sections do; what diffable data
/// sources and SwiftUI need of the collections they show.
extension JSONCollection {
    /// Where the collection first repeats an identity, as `path` names its parts: the
    /// later of the two rows (or sections) and the one it repeats; `nil` when it repeats
    /// none.
    public func firstRepeatedIdentity(path: String) -> String? {
        switch self {
        case .list(let items):
            var seen: [Fingerprint: Int] = [:]
            for (index, item) in items.enumerated() {
                if let first = seen.updateValue(index, forKey: item.identity) {
                    return "\(path)[\(index)] repeats the identity of \(path)[\(first)]"
                }
            }
        case .sectioned(let sections):
            var seenSections: [Fingerprint: Int] = [:]
            var seenRows: [Fingerprint: (section: Int, row: Int)] = [:]
            for (sectionIndex, section) in sections.enumerated() {
                if let first = seenSections.updateValue(sectionIndex, forKey: section.header.identity) {
                    return "\(path).sections[\(sectionIndex)] repeats the identity of \(path).sections[\(first)]"
                }
                for (rowIndex, row) in section.items.enumerated() {
                    if let first = seenRows.updateValue((sectionIndex, rowIndex), forKey: row.identity) {
                        return "\(path).sections[\(sectionIndex)].items[\(rowIndex)] repeats the identity of "
                            + "\(path).sections[\(first.section)].items[\(first.row)]"
                    }
                }
            }
        }
        return nil
    }
}
