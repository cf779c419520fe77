/// A list batch seen through a window: the batch that takes the rows `offset..<offset+limit`
/// of the old list to the rows `offset..<offset+limit` of the new one.
///
/// A row that leaves the window is deleted and one that enters is inserted; rows in both
/// windows stay where a longest run of them keeps its order (among equally long runs, the
/// one keeping the most changed rows), and are reloaded if the batch reloads them; the
/// others move, or are deleted and inserted if their content changed (docs/batch-format.md
/// §4.6). Where each row of the windows comes from is found from the batch's operations
/// alone (``WindowCrossing``), in time proportional to the window and the batch's
/// operations, times a logarithm, whatever the lists' lengths. (Where identities repeat,
/// two rows of one identity that the batch pairs apart may leave and enter the window as a
/// delete and an insert where a move would do: valid, not always the smallest.)
package struct ListBatchWindow: Hashable, Sendable {
    /// The window's batch: its indices count from the window's first row, its counts are
    /// the window's.
    package let batch: ListBatch
    /// The new list's position of each row the window's batch reloads, in the order of its
    /// `reloaded` (where a client's new content for it is); an inserted row's is `offset`
    /// plus its index.
    package let reloadedPositions: [Int]

    /// The window `offset..<offset+limit` of `batch`.
    package init(_ batch: ListBatch, offset: Int, limit: Int) {
        let old = windowRange(offset: offset, limit: limit, count: batch.oldCount)
        let new = windowRange(offset: offset, limit: limit, count: batch.newCount)
        let rows = batch.rows
        let crossing = WindowCrossing(deleted: rows.deleted, inserted: rows.inserted, moves: rows.moved, old: old, new: new)
        let reloaded = Set(rows.reloaded)
        let stays = staying(crossing.both, offset: offset) { !$0.moved && reloaded.contains($0.old) }
        var changes = RowChanges<Int>()
        var reloadedPositions: [Int] = []
        var leaving = crossing.leaving
        var replaced: [Int] = []  // changed rows that move: deleted here, inserted at their new position
        for (row, stay) in zip(crossing.both, stays) {
            let changed = !row.moved && reloaded.contains(row.old)
            if stay {
                if changed {
                    changes.reloaded.append(row.old - offset)
                    reloadedPositions.append(row.new)
                }
            } else if changed {
                leaving.append(row.old)
                replaced.append(row.new)
            } else {
                changes.moved.append(Move(from: row.old - offset, to: row.new - offset))
            }
        }
        changes.deleted = leaving.sorted().map { $0 - offset }
        changes.inserted = merged(crossing.entering, replaced.sorted()).map { $0 - offset }
        self.batch = ListBatch(rows: changes, oldCount: old.count, newCount: new.count)
        self.reloadedPositions = reloadedPositions
    }

    init(batch: ListBatch, reloadedPositions: [Int]) {
        self.batch = batch
        self.reloadedPositions = reloadedPositions
    }

    /// The window `offset..<offset+limit` of the batch from the empty list to one of
    /// `newCount` rows: every row of the window inserted (in time proportional to the window).
    package init(fromEmptyTo newCount: Int, offset: Int, limit: Int) {
        let new = windowRange(offset: offset, limit: limit, count: newCount)
        batch = ListBatch(rows: RowChanges(inserted: Array(0..<new.count)), oldCount: 0, newCount: new.count)
        reloadedPositions = []
    }
}

/// Which of `both`, the elements in both windows (by old position), stay: a longest run
/// whose new positions increase, among equally long ones the one keeping the most elements
/// `preferred` (changed rows, so they are reloads; sections changed inside, so they need not
/// be sent whole).
func staying(_ both: [(old: Int, new: Int, moved: Bool)], offset: Int, preferred: ((old: Int, new: Int, moved: Bool)) -> Bool) -> [Bool] {
    let weight = both.count + 1
    return heaviestIncreasingSubsequence(both.map { $0.new - offset }, weights: both.map { weight + (preferred($0) ? 1 : 0) })
}
