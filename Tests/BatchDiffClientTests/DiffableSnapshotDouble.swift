import BatchDiffClient

/// A snapshot double that keeps `NSDiffableDataSourceSnapshot`'s rules: identifiers unique in
/// the snapshot (sections among sections, items among all items), and every identifier an
/// operation names (to delete, move, mark, or insert next to) present, and never itself. Where
/// UIKit would trap, the double records the broken rule and does nothing.
struct DiffableSnapshotDouble<SectionID: Hashable, ItemID: Hashable>: DiffableSnapshot {
    private(set) var sections: [(id: SectionID, items: [ItemID])] = []
    /// The rules broken, in order (UIKit would have trapped at the first).
    private(set) var traps: [String] = []
    private(set) var reconfigured: [ItemID] = []
    private(set) var reloaded: [ItemID] = []
    /// The operations called, by name, in order.
    private(set) var calls: [String] = []

    var sectionIdentifiers: [SectionID] { sections.map(\.id) }

    func itemIdentifiers(inSection identifier: SectionID) -> [ItemID] {
        sections.first { $0.id == identifier }?.items ?? []
    }

    private func sectionIndex(_ id: SectionID) -> Int? { sections.firstIndex { $0.id == id } }

    private func itemPath(_ id: ItemID) -> (section: Int, row: Int)? {
        for (section, entry) in sections.enumerated() {
            if let row = entry.items.firstIndex(of: id) { return (section, row) }
        }
        return nil
    }

    /// Records a trap unless `rule` holds.
    private mutating func require(_ rule: Bool, _ message: @autoclosure () -> String) -> Bool {
        if !rule { traps.append(message()) }
        return rule
    }

    /// Whether `ids` are new: unique, and none in the snapshot yet.
    private mutating func requireNewSections(_ ids: [SectionID]) -> Bool {
        require(Set(ids).count == ids.count && ids.allSatisfy { sectionIndex($0) == nil }, "sections \(ids) repeat or are already there")
    }

    private mutating func requireNewItems(_ ids: [ItemID]) -> Bool {
        require(Set(ids).count == ids.count && ids.allSatisfy { itemPath($0) == nil }, "items \(ids) repeat or are already there")
    }

    mutating func appendSections(_ identifiers: [SectionID]) {
        calls.append("appendSections")
        guard requireNewSections(identifiers) else { return }
        sections += identifiers.map { ($0, []) }
    }

    mutating func insertSections(_ identifiers: [SectionID], beforeSection toIdentifier: SectionID) {
        insertSections(identifiers, next: toIdentifier, after: false)
    }

    mutating func insertSections(_ identifiers: [SectionID], afterSection toIdentifier: SectionID) {
        insertSections(identifiers, next: toIdentifier, after: true)
    }

    private mutating func insertSections(_ identifiers: [SectionID], next neighbour: SectionID, after: Bool) {
        calls.append("insertSections")
        guard requireNewSections(identifiers) else { return }
        guard let index = sectionIndex(neighbour) else { return traps.append("insert sections next to \(neighbour), which is not there") }
        sections.insert(contentsOf: identifiers.map { ($0, []) }, at: after ? index + 1 : index)
    }

    mutating func deleteSections(_ identifiers: [SectionID]) {
        calls.append("deleteSections")
        guard require(identifiers.allSatisfy { sectionIndex($0) != nil }, "delete sections \(identifiers), not all there") else { return }
        sections.removeAll { identifiers.contains($0.id) }
    }

    mutating func moveSection(_ identifier: SectionID, beforeSection toIdentifier: SectionID) {
        moveSection(identifier, next: toIdentifier, after: false)
    }

    mutating func moveSection(_ identifier: SectionID, afterSection toIdentifier: SectionID) {
        moveSection(identifier, next: toIdentifier, after: true)
    }

    private mutating func moveSection(_ identifier: SectionID, next neighbour: SectionID, after: Bool) {
        calls.append("moveSection")
        guard require(identifier != neighbour, "move section \(identifier) next to itself"),
              let from = sectionIndex(identifier), sectionIndex(neighbour) != nil
        else { return traps.append("move section \(identifier) next to \(neighbour): one is not there") }
        let moving = sections.remove(at: from)
        let index = sectionIndex(neighbour)!
        sections.insert(moving, at: after ? index + 1 : index)
    }

    mutating func appendItems(_ identifiers: [ItemID], toSection sectionIdentifier: SectionID?) {
        calls.append("appendItems")
        guard requireNewItems(identifiers) else { return }
        guard let index = sectionIdentifier.map(sectionIndex) ?? (sections.isEmpty ? nil : sections.count - 1) else {
            return traps.append("append items to section \(String(describing: sectionIdentifier)), which is not there")
        }
        sections[index].items += identifiers
    }

    mutating func insertItems(_ identifiers: [ItemID], beforeItem beforeIdentifier: ItemID) {
        insertItems(identifiers, next: beforeIdentifier, after: false)
    }

    mutating func insertItems(_ identifiers: [ItemID], afterItem afterIdentifier: ItemID) {
        insertItems(identifiers, next: afterIdentifier, after: true)
    }

    private mutating func insertItems(_ identifiers: [ItemID], next neighbour: ItemID, after: Bool) {
        calls.append("insertItems")
        guard requireNewItems(identifiers) else { return }
        guard let path = itemPath(neighbour) else { return traps.append("insert items next to \(neighbour), which is not there") }
        sections[path.section].items.insert(contentsOf: identifiers, at: after ? path.row + 1 : path.row)
    }

    mutating func deleteItems(_ identifiers: [ItemID]) {
        calls.append("deleteItems")
        guard require(identifiers.allSatisfy { itemPath($0) != nil }, "delete items \(identifiers), not all there") else { return }
        for index in sections.indices { sections[index].items.removeAll { identifiers.contains($0) } }
    }

    mutating func deleteAllItems() {
        calls.append("deleteAllItems")
        sections = []
    }

    mutating func moveItem(_ identifier: ItemID, beforeItem toIdentifier: ItemID) {
        moveItem(identifier, next: toIdentifier, after: false)
    }

    mutating func moveItem(_ identifier: ItemID, afterItem toIdentifier: ItemID) {
        moveItem(identifier, next: toIdentifier, after: true)
    }

    private mutating func moveItem(_ identifier: ItemID, next neighbour: ItemID, after: Bool) {
        calls.append("moveItem")
        guard require(identifier != neighbour, "move item \(identifier) next to itself"),
              let from = itemPath(identifier), itemPath(neighbour) != nil
        else { return traps.append("move item \(identifier) next to \(neighbour): one is not there") }
        sections[from.section].items.remove(at: from.row)
        let to = itemPath(neighbour)!
        sections[to.section].items.insert(identifier, at: after ? to.row + 1 : to.row)
    }

    mutating func reconfigureItems(_ identifiers: [ItemID]) {
        calls.append("reconfigureItems")
        guard require(identifiers.allSatisfy { itemPath($0) != nil }, "reconfigure items \(identifiers), not all there") else { return }
        reconfigured += identifiers
    }

    mutating func reloadItems(_ identifiers: [ItemID]) {
        calls.append("reloadItems")
        guard require(identifiers.allSatisfy { itemPath($0) != nil }, "reload items \(identifiers), not all there") else { return }
        reloaded += identifiers
    }
}
