/// How the elements (rows, or sections) of a window of an old list and the same window of
/// a new list relate, found from a batch's operations on the whole lists alone: those that
/// leave the window, those that enter it, and those in both. The elements the batch neither
/// deletes, inserts nor moves keep their order, so the k-th of them in the old list is the
/// k-th in the new: each one's other position is found by binary search over the batch's
/// operations, in time proportional to the window and the operations, times a logarithm.
struct WindowCrossing {
    /// Old positions of the elements that leave the window, sorted.
    var leaving: [Int] = []
    /// New positions of the elements that enter the window, sorted.
    var entering: [Int] = []
    /// The elements in both windows, by old position: the new one, and whether the batch moves it.
    var both: [(old: Int, new: Int, moved: Bool)] = []

    /// The crossing of the windows `old` (of the old list) and `new` (of the new list) by
    /// the operations `deleted`, `inserted` (both sorted) and `moves` (sorted by `from`).
    init(deleted: [Int], inserted: [Int], moves: [Move<Int>], old: Range<Int>, new: Range<Int>) {
        let kept = KeptPositions(deleted: deleted, inserted: inserted, moves: moves)
        let (deletedSet, insertedSet) = (Set(deleted), Set(inserted))
        var movedTo: [Int: Int] = [:]
        var movedFrom: [Int: Int] = [:]
        for move in moves where old.contains(move.from) || new.contains(move.to) {
            movedTo[move.from] = move.to
            movedFrom[move.to] = move.from
        }
        for position in old where !deletedSet.contains(position) {
            let to = movedTo[position] ?? kept.newPosition(ofOld: position)
            if new.contains(to) { both.append((position, to, movedTo[position] != nil)) } else { leaving.append(position) }
        }
        leaving = merged(leaving, deleted.filter(old.contains))
        for position in new where !insertedSet.contains(position) {
            let from = movedFrom[position] ?? kept.oldPosition(ofNew: position)
            if !old.contains(from) { entering.append(position) }
        }
        entering = merged(entering, inserted.filter(new.contains))
    }
}

/// Where the elements a batch neither deletes, inserts nor moves stand in the other list.
struct KeptPositions {
    /// Old positions of the elements deleted or moved away, and new ones of those inserted
    /// or moved in, sorted.
    private let gone: [Int]
    private let came: [Int]

    init(deleted: [Int], inserted: [Int], moves: [Move<Int>]) {
        self.init(gone: merged(deleted, moves.map(\.from).sorted()), came: merged(inserted, moves.map(\.to).sorted()))
    }

    /// `gone`: the sorted old positions of the elements deleted or moved away; `came`: the
    /// sorted new positions of those inserted or moved in.
    init(gone: [Int], came: [Int]) {
        self.gone = gone
        self.came = came
    }

    /// The new position of the kept element at old position `old`.
    func newPosition(ofOld old: Int) -> Int { Self.position(old, leaving: gone, entering: came) }

    /// The old position of the kept element at new position `new`.
    func oldPosition(ofNew new: Int) -> Int { Self.position(new, leaving: came, entering: gone) }

    /// The k-th kept position of the other list, k the rank of `position` among this list's
    /// kept ones (`leaving` set aside): past the j `entering` at or below it, for the
    /// largest j with entering[j - 1] - (j - 1) <= k.
    private static func position(_ position: Int, leaving: [Int], entering: [Int]) -> Int {
        let rank = position - countBelow(position, in: leaving)
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
}

/// The positions `offset..<offset+limit` that a list of `count` elements has.
func windowRange(offset: Int, limit: Int, count: Int) -> Range<Int> {
    let start = min(max(0, offset), count)
    return start..<start + min(max(0, limit), count - start)
}

/// Two sorted lists as one.
func merged(_ first: [Int], _ second: [Int]) -> [Int] {
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

extension RowChanges<RowPath> {
    /// Each section's rows deleted or moved away (old sections, old rows) and inserted or
    /// moved in (new sections, new rows), sorted: what ``KeptPositions`` crosses a section's
    /// kept rows by.
    var goneAndCame: (gone: [Int: [Int]], came: [Int: [Int]]) {
        var gone: [Int: [Int]] = [:]
        var came: [Int: [Int]] = [:]
        for path in deleted { gone[path.section, default: []].append(path.row) }
        for path in inserted { came[path.section, default: []].append(path.row) }
        for move in moved {
            gone[move.from.section, default: []].append(move.from.row)
            came[move.to.section, default: []].append(move.to.row)
        }
        return (gone.mapValues { $0.sorted() }, came.mapValues { $0.sorted() })
    }
}
