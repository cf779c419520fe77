import BatchDiff
import BatchDiffJSON

/// What a patch did to a list (``PatchedList``), found from the rows it named alone: the
/// batch, the texts of the rows the batch inserts and reloads, and the new text as a change
/// of the old one and back (``TextDelta``). Its cost is the rows named times a logarithm,
/// whatever the list's length.
///
/// The rows the patch did not name keep their order. They are cut into segments where a
/// named row stands between two of them, before or after; each segment is one run of rows
/// in both versions. Among the segments and the named rows that stay, those whose old
/// positions rise in the new order with the most rows stay in place (a longest increasing
/// subsequence, each segment weighing its rows; among equally heavy ones, the one keeping
/// the most changed rows); every other one moves, a changed row being deleted and inserted
/// (docs/batch-format.md §5). So the batch has no more operations than the differ's.
struct ListPatchChange {
    let batch: ListBatch
    /// The texts of the rows `batch` inserts, and of those it reloads, in its order.
    let insertedTexts: [ArraySlice<UInt8>]
    let reloadedTexts: [ArraySlice<UInt8>]
    /// The new text as a change of the old, and the old as a change of the new.
    let forward: TextDelta
    let backward: TextDelta
    /// The new text's length.
    let textCount: Int

    /// A named row: before the patch (`nil`: the patch added it), after (`nil`: removed).
    private struct Named {
        let old: RowOrder.PlacedRow?
        let new: RowOrder.PlacedRow?

        var isChanged: Bool { old != nil && new != nil && old!.content != new!.content }
    }

    /// A run of rows the patch did not name, the same in both versions.
    private struct Segment {
        let oldStart: Int
        let newStart: Int
        let count: Int
        /// Where its text (rows and the commas between them) starts in each version's text.
        let oldOffset: Int
        let newOffset: Int
        let byteCount: Int
    }

    private enum Element {
        case segment(Int)
        case named(Int)
    }

    init(_ list: PatchedList) throws(FeedError) {
        let order = list.order
        var named: [Named] = []
        for (identity, old) in list.before {
            let new = Self.side(of: identity, in: order)
            named.append(Named(old: old, new: new))
        }
        for identity in list.added {
            if let new = Self.side(of: identity, in: order) { named.append(Named(old: nil, new: new)) }
        }
        let byOld = named.indices.filter { named[$0].old != nil }.sorted { named[$0].old!.position < named[$1].old!.position }
        let byNew = named.indices.filter { named[$0].new != nil }.sorted { named[$0].new!.position < named[$1].new!.position }
        let segments = try Self.segments(byOld: byOld.map { named[$0].old! }, byNew: byNew.map { named[$0].new! }, list: list)

        // In new order: segments and named rows, merged by position.
        var inNewOrder: [Element] = []
        inNewOrder.reserveCapacity(segments.count + byNew.count)
        var next = 0
        for (index, segment) in segments.enumerated() {
            while next < byNew.count, named[byNew[next]].new!.position < segment.newStart {
                inNewOrder.append(.named(byNew[next]))
                next += 1
            }
            inNewOrder.append(.segment(index))
        }
        inNewOrder += byNew[next...].map { .named($0) }
        var inOldOrder: [Element] = []
        next = 0
        for index in segments.indices {  // (in old order too: unnamed rows keep theirs)
            while next < byOld.count, named[byOld[next]].old!.position < segments[index].oldStart {
                inOldOrder.append(.named(byOld[next]))
                next += 1
            }
            inOldOrder.append(.segment(index))
        }
        inOldOrder += byOld[next...].map { .named($0) }

        // What stays in place: the heaviest run of old positions rising in new order.
        let staying = inNewOrder.filter { element in
            if case .named(let index) = element { return named[index].old != nil && named[index].new != nil }
            return true
        }
        let kept = heaviestIncreasingRun(
            keys: staying.map { element in
                switch element {
                case .segment(let index): segments[index].oldStart
                case .named(let index): named[index].old!.position
                }
            },
            weights: staying.map { element in
                switch element {
                case .segment(let index): 2 * segments[index].count
                case .named(let index): named[index].isChanged ? 3 : 2
                }
            }
        )
        var rows = RowChanges<Int>()
        var inserted: [(position: Int, text: ArraySlice<UInt8>)] = []
        var reloaded: [(position: Int, text: ArraySlice<UInt8>)] = []
        for (element, stays) in zip(staying, kept) {
            switch element {
            case .segment(let index):
                let segment = segments[index]
                guard !stays else { continue }
                for row in 0..<segment.count { rows.moved.append(Move(from: segment.oldStart + row, to: segment.newStart + row)) }
            case .named(let index):
                let (old, new) = (named[index].old!, named[index].new!)
                if !named[index].isChanged {
                    if !stays { rows.moved.append(Move(from: old.position, to: new.position)) }
                } else if stays {
                    reloaded.append((old.position, order.text(at: new.location)))
                } else {
                    rows.deleted.append(old.position)
                    inserted.append((new.position, order.text(at: new.location)))
                }
            }
        }
        for entry in named {
            if let old = entry.old, entry.new == nil { rows.deleted.append(old.position) }
            if let new = entry.new, entry.old == nil { inserted.append((new.position, order.text(at: new.location))) }
        }
        inserted.sort { $0.position < $1.position }
        reloaded.sort { $0.position < $1.position }
        rows.deleted.sort()
        rows.inserted = inserted.map(\.position)
        rows.reloaded = reloaded.map(\.position)
        rows.moved.sort { $0.from < $1.from }
        batch = ListBatch(rows: rows, oldCount: list.oldCount, newCount: order.count)
        insertedTexts = inserted.map(\.text)
        reloadedTexts = reloaded.map(\.text)
        textCount = order.textCount

        forward = Self.text(
            of: inNewOrder, over: list.oldTextCount, segment: { segments[$0].oldOffset..<segments[$0].oldOffset + segments[$0].byteCount },
            row: { order.text(at: named[$0].new!.location) }
        )
        backward = Self.text(
            of: inOldOrder, over: textCount, segment: { segments[$0].newOffset..<segments[$0].newOffset + segments[$0].byteCount },
            row: { order.text(at: named[$0].old!.location) }
        )
    }

    private static func side(of identity: Fingerprint, in order: RowOrder) -> RowOrder.PlacedRow? {
        guard case .row(let row) = order.row(identity) else { return nil }
        return order.placed(row)
    }

    /// The segments of the rows the patch did not name, in new order, given the named rows
    /// before (`byOld`) and after (`byNew`), each sorted by position. A segment is told
    /// by the unnamed rows before it (its index among them): a named row at position `p`,
    /// the `j`-th named row of its side, stands right before unnamed row `p - j`, a cut.
    private static func segments(byOld: [RowOrder.PlacedRow], byNew: [RowOrder.PlacedRow], list: PatchedList) throws(FeedError) -> [Segment] {
        let order = list.order
        let unnamed = list.oldCount - byOld.count
        guard unnamed == order.count - byNew.count else { throw .internalFailure("a patch's rows do not add up") }
        let oldCuts = byOld.enumerated().map { $0.element.position - $0.offset }
        let newCuts = byNew.enumerated().map { $0.element.position - $0.offset }
        let cuts = Array(Set(oldCuts + newCuts + [0, unnamed])).sorted()
        var segments: [Segment] = []
        var (oldNamed, newNamed) = (0, 0)  // named rows before the segment, on each side
        var (oldNamedBytes, newNamedBytes) = (0, 0)
        for (start, end) in zip(cuts, cuts.dropFirst()) where start < end {
            while oldNamed < byOld.count, oldCuts[oldNamed] <= start {
                oldNamedBytes += Int(byOld[oldNamed].location.count)
                oldNamed += 1
            }
            while newNamed < byNew.count, newCuts[newNamed] <= start {
                newNamedBytes += Int(byNew[newNamed].location.count)
                newNamed += 1
            }
            let (oldStart, newStart, count) = (start + oldNamed, start + newNamed, end - start)
            let newBytesBefore = order.bytes(before: newStart)
            let unnamedBytesBefore = newBytesBefore - newNamedBytes
            segments.append(Segment(
                oldStart: oldStart, newStart: newStart, count: count,
                oldOffset: 1 + oldStart + unnamedBytesBefore + oldNamedBytes,
                newOffset: 1 + newStart + newBytesBefore,
                byteCount: order.bytes(before: newStart + count) - newBytesBefore + count - 1
            ))
        }
        return segments
    }

    /// A list's compact text as a change of another of `baseCount` bytes: `elements` in
    /// order between `[` and `]`, commas between them, each segment copied from where
    /// `segment` says and each named row written from `row`'s text.
    private static func text(
        of elements: [Element], over baseCount: Int, segment: (Int) -> Range<Int>, row: (Int) -> ArraySlice<UInt8>
    ) -> TextDelta {
        var delta = TextDelta(over: baseCount)
        delta.append(literal: [UInt8(ascii: "[")])
        for (index, element) in elements.enumerated() {
            if index > 0 { delta.append(literal: [UInt8(ascii: ",")]) }
            switch element {
            case .segment(let index): delta.append(copying: segment(index))
            case .named(let index): delta.append(literal: row(index))
            }
        }
        delta.append(literal: [UInt8(ascii: "]")])
        delta.trimCapacity()
        return delta
    }
}

/// Marks the elements of the heaviest strictly increasing run of `keys` (distinct), each
/// element weighing its `weights` entry; O(n log n), with a Fenwick tree of the best run
/// ending below each key.
func heaviestIncreasingRun(keys: [Int], weights: [Int]) -> [Bool] {
    let ranks = Dictionary(uniqueKeysWithValues: keys.sorted().enumerated().map { ($0.element, $0.offset + 1) })
    // best[i]: the heaviest run ending at an element whose key rank is in i's Fenwick range.
    var best = [(weight: Int, element: Int)](repeating: (0, -1), count: keys.count + 1)
    var previous = [Int](repeating: -1, count: keys.count)
    var total = [Int](repeating: 0, count: keys.count)
    var heaviest = (weight: 0, element: -1)
    for (element, key) in keys.enumerated() {
        let rank = ranks[key]!
        var below = (weight: 0, element: -1)
        var index = rank - 1
        while index > 0 {
            if best[index].weight > below.weight { below = best[index] }
            index -= index & -index
        }
        total[element] = below.weight + weights[element]
        previous[element] = below.element
        if total[element] > heaviest.weight { heaviest = (total[element], element) }
        index = rank
        while index <= keys.count {
            if total[element] > best[index].weight { best[index] = (total[element], element) }
            index += index & -index
        }
    }
    var marked = [Bool](repeating: false, count: keys.count)
    var element = heaviest.element
    while element >= 0 {
        marked[element] = true
        element = previous[element]
    }
    return marked
}
