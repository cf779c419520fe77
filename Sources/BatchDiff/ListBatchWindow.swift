/// A list batch seen through a window: the batch that takes the rows `offset..<offset+limit`
/// of the old list to the rows `offset..<offset+limit` of the new one.
///
/// A row that leaves the window is deleted and one that enters is inserted; rows in both
/// windows stay where a longest run of them keeps its order (among equally long runs, the
/// one keeping the most changed rows), and are reloaded if the batch reloads them; the
/// others move, or are deleted and inserted if their content changed (docs/batch-format.md
/// §4.6). Where each row of the windows comes from is found from the batch's operations
/// alone: the rows neither deleted, inserted nor moved keep their order, so the k-th of them
/// in the old list is the k-th in the new. It costs time proportional to the window and the
/// batch's operations, times a logarithm, whatever the lists' lengths. (Where identities
/// repeat, two rows of one identity that the batch pairs apart may leave and enter the window
/// as a delete and an insert where a move would do: valid, not always the smallest.)
public struct ListBatchWindow: Hashable, Sendable {
    /// The window's batch: its indices count from the window's first row, its counts are
    /// the window's.
    public let batch: ListBatch
    /// The new list's position of each row the window's batch reloads, in the order of its
    /// `reloaded` (where a client's new content for it is); an inserted row's is `offset`
    /// plus its index.
    public let reloadedPositions: [Int]

    /// The window `offset..<offset+limit` of `batch`.
    public init(_ batch: ListBatch, offset: Int, limit: Int) {
        let old = Self.clamp(offset, limit, batch.oldCount)
        let new = Self.clamp(offset, limit, batch.newCount)
        let rows = batch.rows
        let gone = Self.merged(rows.deleted, rows.moved.map(\.from))
        let came = Self.merged(rows.inserted, rows.moved.map(\.to).sorted())
        let deleted = Set(rows.deleted)
        let inserted = Set(rows.inserted)
        let reloaded = Set(rows.reloaded)
        var movedTo: [Int: Int] = [:]
        var movedFrom: [Int: Int] = [:]
        for move in rows.moved where old.contains(move.from) || new.contains(move.to) {
            movedTo[move.from] = move.to
            movedFrom[move.to] = move.from
        }

        var leaving: [Int] = []
        // Rows in both windows, by old position: the new position, and whether it changed.
        var both: [(old: Int, new: Int, changed: Bool)] = []
        for position in old {
            if deleted.contains(position) {
                leaving.append(position)
            } else if let to = movedTo[position] {
                if new.contains(to) { both.append((position, to, false)) } else { leaving.append(position) }
            } else {
                let to = Self.kept(position, leaving: gone, entering: came)
                if new.contains(to) { both.append((position, to, reloaded.contains(position))) } else { leaving.append(position) }
            }
        }
        var entering: [Int] = []
        for position in new where !inserted.contains(position) {
            let from = movedFrom[position] ?? Self.kept(position, leaving: came, entering: gone)
            if !old.contains(from) { entering.append(position) }
        }
        entering = Self.merged(entering, rows.inserted.filter(new.contains))

        // Of the rows in both, a heaviest increasing run stays: as many as can, then as many
        // changed ones as can (so that they are reloads, not deletes and inserts).
        let weight = both.count + 1
        let stays = heaviestIncreasingSubsequence(both.map { $0.new - offset }, weights: both.map { weight + ($0.changed ? 1 : 0) })
        var changes = RowChanges<Int>()
        var reloadedPositions: [Int] = []
        var replaced: [Int] = []  // changed rows that move: deleted here, inserted at their new position
        for (row, stay) in zip(both, stays) {
            if stay {
                if row.changed {
                    changes.reloaded.append(row.old - offset)
                    reloadedPositions.append(row.new)
                }
            } else if row.changed {
                leaving.append(row.old)
                replaced.append(row.new)
            } else {
                changes.moved.append(Move(from: row.old - offset, to: row.new - offset))
            }
        }
        changes.deleted = leaving.sorted().map { $0 - offset }
        changes.inserted = Self.merged(entering, replaced.sorted()).map { $0 - offset }
        self.batch = ListBatch(rows: changes, oldCount: old.count, newCount: new.count)
        self.reloadedPositions = reloadedPositions
    }

    /// The window `offset..<offset+limit` of the batch from the empty list to one of
    /// `newCount` rows: every row of the window inserted (in time proportional to the window).
    public init(fromEmptyTo newCount: Int, offset: Int, limit: Int) {
        let new = Self.clamp(offset, limit, newCount)
        batch = ListBatch(rows: RowChanges(inserted: Array(0..<new.count)), oldCount: 0, newCount: new.count)
        reloadedPositions = []
    }

    /// The positions `offset..<offset+limit` that a list of `count` rows has.
    private static func clamp(_ offset: Int, _ limit: Int, _ count: Int) -> Range<Int> {
        let start = min(max(0, offset), count)
        return start..<start + min(max(0, limit), count - start)
    }

    /// Where a row that is neither deleted, inserted nor moved at `position` of one list
    /// stands in the other: the rows `leaving` (sorted positions of rows of this list that
    /// are not kept) and `entering` (of the other list) set aside, it is the k-th kept row
    /// in both.
    private static func kept(_ position: Int, leaving: [Int], entering: [Int]) -> Int {
        let rank = position - countBelow(position, in: leaving)
        // The rank-th position that `entering` does not hold: past the j entering ones at or
        // below it, for the largest j with entering[j - 1] - (j - 1) <= rank.
        var low = 0
        var high = entering.count
        while low < high {
            let middle = (low + high) / 2
            if entering[middle] - middle <= rank { low = middle + 1 } else { high = middle }
        }
        return rank + low
    }

    /// How many of the sorted `values` are below `value`.
    private static func countBelow(_ value: Int, in values: [Int]) -> Int {
        var low = 0
        var high = values.count
        while low < high {
            let middle = (low + high) / 2
            if values[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Two sorted lists as one.
    private static func merged(_ first: [Int], _ second: [Int]) -> [Int] {
        var result: [Int] = []
        result.reserveCapacity(first.count + second.count)
        var (i, j) = (0, 0)
        while i < first.count || j < second.count {
            if j == second.count || (i < first.count && first[i] <= second[j]) {
                result.append(first[i])
                i += 1
            } else {
                result.append(second[j])
                j += 1
            }
        }
        return result
    }
}
