/// Where each position of the new collection comes from under a batch, by the fill rule
/// of docs/batch-format.md §3: inserted and moved-in elements are pinned at their
/// destinations, and the remaining positions are filled, in order, with the old elements
/// that stay.
///
/// Building a placement checks that the batch is well-formed for the counts it carries:
/// indexes in range, no position named twice, counts that balance.
struct Placement {
    /// The origin of one new position.
    enum Origin<Index: Hashable>: Hashable {
        /// The `k`-th element of the batch's inserted list.
        case inserted(Int)
        /// The old element at this index.
        case old(Index)
    }

    /// For each new section, where it comes from.
    let sections: [Origin<Int>]
    /// For each new section that comes from an old one, where each of its rows comes from;
    /// `nil` for inserted sections.
    let rows: [[Origin<RowPath>]?]

    init(_ batch: SectionedBatch) throws {
        let changes = batch.sections
        // Negative move sources are the rows' stand-ins below; a section's is simply wrong.
        if let move = changes.moved.first(where: { $0.from < 0 }) {
            throw BatchError("sections: move from \(move.from) is outside the old collection")
        }
        sections = try Self.fill(
            oldCount: batch.oldCounts.count, newCount: batch.newCounts.count,
            removed: changes.deleted, inserted: changes.inserted, moved: changes.moved, what: "sections"
        )
        let rowChanges = batch.rows
        let leaving = rowChanges.deleted + rowChanges.moved.map(\.from)
        let leavingSet = Set(leaving)
        let deletedSections = Set(changes.deleted)
        for path in leaving + rowChanges.reloaded {
            guard batch.oldCounts.indices.contains(path.section) else {
                throw BatchError("rows: \(path) names a section outside the old collection")
            }
            guard !deletedSections.contains(path.section) else {
                throw BatchError("rows: \(path) is inside section \(path.section), which is deleted")
            }
        }
        for path in rowChanges.inserted + rowChanges.moved.map(\.to) {
            guard batch.newCounts.indices.contains(path.section) else {
                throw BatchError("rows: \(path) names a section outside the new collection")
            }
            guard case .old = sections[path.section] else {
                throw BatchError("rows: \(path) is inside section \(path.section), which is inserted")
            }
        }
        var leavingByOld = [[Int]](filling: [], count: batch.oldCounts.count)
        for path in leaving { leavingByOld[path.section].append(path.row) }
        // For each new section, its inserted rows and their indexes in `rows.inserted`.
        var insertedByNew = [[(row: Int, index: Int)]](filling: [], count: batch.newCounts.count)
        for (index, path) in rowChanges.inserted.enumerated() { insertedByNew[path.section].append((path.row, index)) }
        var arrivingByNew = [[Move<RowPath>]](filling: [], count: batch.newCounts.count)
        for move in rowChanges.moved { arrivingByNew[move.to.section].append(move) }

        rows = try sections.enumerated().map { newSection, origin in
            guard case .old(let oldSection) = origin else { return nil }
            let arriving = arrivingByNew[newSection]
            // Rows arriving by a move are pinned under a stand-in index, -1 - k for the k-th.
            let filled = try Self.fill(
                oldCount: batch.oldCounts[oldSection], newCount: batch.newCounts[newSection],
                removed: leavingByOld[oldSection], inserted: insertedByNew[newSection].map(\.row),
                moved: arriving.enumerated().map { Move(from: -1 - $0.offset, to: $0.element.to.row) },
                what: "rows of new section \(newSection)"
            )
            return filled.map { origin in
                switch origin {
                case .inserted(let k):
                    return .inserted(insertedByNew[newSection][k].index)
                case .old(let row) where row < 0:
                    return .old(arriving[-1 - row].from)
                case .old(let row):
                    return .old(RowPath(section: oldSection, row: row))
                }
            }
        }
        let staying = Set(rows.lazy.compactMap { $0 }.joined().compactMap { origin -> RowPath? in
            if case .old(let path) = origin { return path } else { return nil }
        })
        for path in rowChanges.reloaded where !staying.contains(path) || leavingSet.contains(path) {
            throw BatchError("rows.reloaded: \(path) is not a row that stays (outside its section, deleted or moved)")
        }
    }

    /// The fill rule on one level: `newCount` positions; inserted indexes and move
    /// destinations pinned; the rest filled with old indexes neither removed nor moved away,
    /// in order. Move sources below zero are stand-ins that take no old index.
    private static func fill(
        oldCount: Int, newCount: Int, removed: [Int], inserted: [Int], moved: [Move<Int>], what: String
    ) throws -> [Origin<Int>] {
        var origins = [Origin<Int>?](filling: nil, count: newCount)
        func pin(_ origin: Origin<Int>, at index: Int) throws {
            guard index >= 0 && index < newCount else {
                throw BatchError("\(what): \(index) is outside the new collection (\(newCount) after the update)")
            }
            guard origins[index] == nil else { throw BatchError("\(what): new index \(index) is named twice") }
            origins[index] = origin
        }
        for (k, index) in inserted.enumerated() { try pin(.inserted(k), at: index) }
        for move in moved { try pin(.old(move.from), at: move.to) }
        var leaving = Set<Int>()
        for index in removed + moved.map(\.from).filter({ $0 >= 0 }) {
            guard index >= 0 && index < oldCount else {
                throw BatchError("\(what): \(index) is outside the old collection (\(oldCount) before the update)")
            }
            guard leaving.insert(index).inserted else { throw BatchError("\(what): old index \(index) is named twice") }
        }
        var next = 0
        for oldIndex in 0..<oldCount where !leaving.contains(oldIndex) {
            while next < newCount && origins[next] != nil { next += 1 }
            guard next < newCount else {
                throw BatchError("\(what): counts do not balance (\(oldCount) before, \(newCount) after)")
            }
            origins[next] = .old(oldIndex)
        }
        let result = origins.compactMap { $0 }
        guard result.count == newCount else {
            throw BatchError("\(what): counts do not balance (\(oldCount) before, \(newCount) after)")
        }
        return result
    }

    /// The new index path where each of these old paths lands (each must be a staying row).
    func newPaths(of oldPaths: [RowPath]) -> [RowPath] {
        let wanted = Set(oldPaths)
        var destination = [RowPath: RowPath]()
        for (newSection, origins) in rows.enumerated() {
            for (row, origin) in (origins ?? []).enumerated() {
                if case .old(let path) = origin, wanted.contains(path) {
                    destination[path] = RowPath(section: newSection, row: row)
                }
            }
        }
        return oldPaths.map { destination[$0]! }
    }
}
