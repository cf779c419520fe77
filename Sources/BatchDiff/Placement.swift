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
    /// For each old section, where each of its rows that stays in place (neither deleted nor
    /// moved) lands in the new collection: a new section and row, or -1 for the others; no
    /// rows for a deleted section. Arrays by position, not sets: a placement of 100,000 rows
    /// hashed each one twice, a sixth of a feed write's time.
    private let landings: [[Landing]]

    private struct Landing {
        var section: Int32 = -1
        var row: Int32 = -1
    }

    init(_ batch: SectionedBatch) throws {
        // Counts come with the batch (a damaged answer's too): room is made by them only
        // once they balance with the changes (``fill``), and never for a negative one.
        if let count = (batch.oldCounts + batch.newCounts).first(where: { $0 < 0 || $0 > Int32.max }) {
            throw BatchError("counts: \(count) rows in a section (0 to \(Int32.max))")
        }
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
        var deletedSections = [Bool](filling: false, count: batch.oldCounts.count)
        for section in changes.deleted { deletedSections[section] = true }  // in range: checked by the fill above
        for path in leaving + rowChanges.reloaded {
            guard batch.oldCounts.indices.contains(path.section) else {
                throw BatchError("rows: \(path) names a section outside the old collection")
            }
            guard !deletedSections[path.section] else {
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

        var landings = [[Landing]](filling: [], count: batch.oldCounts.count)
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
            // Room by the old count only now that the fill has checked it against the changes.
            landings[oldSection] = [Landing](filling: Landing(), count: batch.oldCounts[oldSection])
            return filled.enumerated().map { newRow, origin in
                switch origin {
                case .inserted(let k):
                    return .inserted(insertedByNew[newSection][k].index)
                case .old(let row) where row < 0:
                    return .old(arriving[-1 - row].from)
                case .old(let row):
                    landings[oldSection][row] = Landing(section: Int32(newSection), row: Int32(newRow))
                    return .old(RowPath(section: oldSection, row: row))
                }
            }
        }
        func staysInPlace(_ path: RowPath) -> Bool {
            landings[path.section].indices.contains(path.row) && landings[path.section][path.row].section >= 0
        }
        if let path = rowChanges.reloaded.first(where: { !staysInPlace($0) }) {
            throw BatchError("rows.reloaded: \(path) is not a row that stays (outside its section, deleted or moved)")
        }
        self.landings = landings
    }

    /// The fill rule on one level: `newCount` positions; inserted indexes and move
    /// destinations pinned; the rest filled with old indexes neither removed nor moved away,
    /// in order. Move sources below zero are stand-ins that take no old index.
    private static func fill(
        oldCount: Int, newCount: Int, removed: [Int], inserted: [Int], moved: [Move<Int>], what: String
    ) throws -> [Origin<Int>] {
        // Checked before room is made by either count: the old elements kept, the inserted and
        // the moved-in ones must make the new count.
        // (Subtracted, not added: a damaged count near Int.max must not overflow.)
        guard newCount - inserted.count - moved.count <= oldCount, oldCount - removed.count - moved.count <= newCount else {
            throw BatchError("\(what): counts do not balance (\(oldCount) before, \(newCount) after)")
        }
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
        var leaving = [Bool](filling: false, count: oldCount)
        for index in removed + moved.map(\.from).filter({ $0 >= 0 }) {
            guard index >= 0 && index < oldCount else {
                throw BatchError("\(what): \(index) is outside the old collection (\(oldCount) before the update)")
            }
            guard !leaving[index] else { throw BatchError("\(what): old index \(index) is named twice") }
            leaving[index] = true
        }
        var next = 0
        for oldIndex in 0..<oldCount where !leaving[oldIndex] {
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
        oldPaths.map { path in
            let landing = landings[path.section][path.row]
            precondition(landing.section >= 0, "\(path) does not land in the new collection")
            return RowPath(section: Int(landing.section), row: Int(landing.row))
        }
    }
}
