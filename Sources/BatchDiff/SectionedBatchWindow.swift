/// A sectioned batch seen through a window of sections: the batch that takes the sections
/// `offset..<offset+limit` of the old collection (each whole) to the sections
/// `offset..<offset+limit` of the new one.
///
/// Sections are crossed as ``ListBatchWindow`` crosses rows (``WindowCrossing``): a section
/// that leaves the window is deleted, one that enters is inserted (whole, with its rows);
/// of the sections in both windows a longest run in order stays (among equally long ones,
/// the one keeping the most sections that change inside), and the others move if nothing
/// changes inside them, or are deleted and inserted whole (docs/batch-format.md §4.7). In a
/// staying section the batch's row operations hold, but for a row moving to or from a
/// section that does not stay, which is inserted or deleted. Header updates go with the
/// sections that stay or move. In time proportional to the window's sections and the
/// batch's operations, times a logarithm.
package struct SectionedBatchWindow: Hashable, Sendable {
    /// The window's batch: section indices count from the window's first section; its
    /// counts are the window's sections'.
    package let batch: SectionedBatch
    /// The new collection's path of each row the window's batch reloads, in the order of
    /// its `reloaded` (where a client's new content for it is). An inserted row's path is
    /// its section plus `offset`, and its row; an inserted or updated section's position is
    /// `offset` plus its index.
    package let reloadedPaths: [RowPath]

    /// The window of the batch from the empty collection: every section of the window
    /// inserted, with its rows (`windowCounts`, each one's row count).
    package init(fromEmptyTo windowCounts: [Int]) {
        batch = SectionedBatch(sections: SectionChanges(inserted: Array(windowCounts.indices)), rows: RowChanges(), oldCounts: [], newCounts: windowCounts)
        reloadedPaths = []
    }

    init(batch: SectionedBatch, reloadedPaths: [RowPath]) {
        self.batch = batch
        self.reloadedPaths = reloadedPaths
    }

    /// The window of a batch that changes nothing, its sections of `windowCounts` rows.
    package init(unchanged windowCounts: [Int]) {
        batch = SectionedBatch(sections: SectionChanges(), rows: RowChanges(), oldCounts: windowCounts, newCounts: windowCounts)
        reloadedPaths = []
    }

    /// The window `offset..<offset+limit` of `batch`'s sections.
    package init(_ batch: SectionedBatch, offset: Int, limit: Int) {
        let old = windowRange(offset: offset, limit: limit, count: batch.oldCounts.count)
        let new = windowRange(offset: offset, limit: limit, count: batch.newCounts.count)
        let sections = batch.sections
        let rows = batch.rows
        let crossing = WindowCrossing(deleted: sections.deleted, inserted: sections.inserted, moves: sections.moved, old: old, new: new)
        // Sections a row operation touches, old side and new side.
        let touchedOld = Set(rows.deleted.map(\.section) + rows.reloaded.map(\.section) + rows.moved.map(\.from.section))
        let touchedNew = Set(rows.inserted.map(\.section) + rows.moved.map(\.to.section))
        let changesInside = { (section: (old: Int, new: Int, moved: Bool)) in touchedOld.contains(section.old) || touchedNew.contains(section.new) }
        let stays = staying(crossing.both, offset: offset, preferred: changesInside)
        let updated = Set(sections.updated)

        var changes = SectionChanges()
        var leaving = crossing.leaving
        var entering = crossing.entering
        // Staying sections, old position to new.
        var stayingNew: [Int: Int] = [:]
        var stayingOld: Set<Int> = []
        for (section, stay) in zip(crossing.both, stays) {
            if stay {
                stayingNew[section.old] = section.new
                stayingOld.insert(section.old)
                if updated.contains(section.new) { changes.updated.append(section.new - offset) }
            } else if changesInside(section) {
                leaving.append(section.old)
                entering.append(section.new)
            } else {
                changes.moved.append(Move(from: section.old - offset, to: section.new - offset))
                if updated.contains(section.new) { changes.updated.append(section.new - offset) }
            }
        }
        changes.deleted = leaving.sorted().map { $0 - offset }
        changes.inserted = entering.sorted().map { $0 - offset }
        changes.updated.sort()
        let stayingNewSet = Set(stayingNew.values)

        // Row operations in staying sections; a row moving across the window's edge is
        // deleted on the side that stays, or inserted.
        let inWindow = { (path: RowPath) in RowPath(section: path.section - offset, row: path.row) }
        var rowChanges = RowChanges<RowPath>()
        rowChanges.deleted = rows.deleted.filter { stayingOld.contains($0.section) }.map(inWindow)
        rowChanges.inserted = rows.inserted.filter { stayingNewSet.contains($0.section) }.map(inWindow)
        for move in rows.moved {
            switch (stayingOld.contains(move.from.section), stayingNewSet.contains(move.to.section)) {
            case (true, true): rowChanges.moved.append(Move(from: inWindow(move.from), to: inWindow(move.to)))
            case (true, false): rowChanges.deleted.append(inWindow(move.from))
            case (false, true): rowChanges.inserted.append(inWindow(move.to))
            case (false, false): break
            }
        }
        rowChanges.deleted.sort()
        rowChanges.inserted.sort()
        // A reloaded row stays in its section: its new row is where the section's kept rows put it.
        var reloadedPaths: [RowPath] = []
        let reloaded = rows.reloaded.filter { stayingOld.contains($0.section) }
        if !reloaded.isEmpty {
            let (gone, came) = rows.goneAndCame
            var kept: [Int: KeptPositions] = [:]
            for path in reloaded {
                let section = stayingNew[path.section]!
                let positions = kept[path.section] ?? KeptPositions(gone: gone[path.section] ?? [], came: came[section] ?? [])
                kept[path.section] = positions
                reloadedPaths.append(RowPath(section: section, row: positions.newPosition(ofOld: path.row)))
            }
            rowChanges.reloaded = reloaded.map(inWindow)
        }
        self.batch = SectionedBatch(
            sections: changes, rows: rowChanges, oldCounts: Array(batch.oldCounts[old]), newCounts: Array(batch.newCounts[new])
        )
        self.reloadedPaths = reloadedPaths
    }
}
