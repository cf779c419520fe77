/// The elements of one list (a list feed's rows, a section's rows, or the sections) that a
/// patch did not name, as runs, and how they and the named ones stand in each version.
///
/// Elements the patch did not name keep their order. They are cut into runs where a named
/// element stands between two of them, before or after the patch; each run is contiguous in
/// both versions. A named element at position `p`, the `j`-th named one of its side, stands
/// right before unnamed element `p - j`: a cut. All of it is found from the named elements
/// and the counted order (``RowOrder``) after the patch, in time proportional to the named
/// elements times a logarithm.
struct UnnamedRuns {
    /// A named element on one side: where it stands, and the length of its text.
    struct Place {
        let position: Int
        let length: Int
    }

    /// A run of unnamed elements.
    struct Run {
        let oldStart: Int
        let newStart: Int
        let count: Int
        /// Where its text (elements and the commas between them) starts in each version's
        /// text of the list (whose `[` is at 0).
        let oldOffset: Int
        let newOffset: Int
        let byteCount: Int

        var oldText: Range<Int> { oldOffset..<oldOffset + byteCount }
        var newText: Range<Int> { newOffset..<newOffset + byteCount }
    }

    /// A run, or a named element (its index on that side), in one version's order.
    enum Element {
        case run(Int)
        case named(Int)
    }

    let runs: [Run]
    /// Runs and named elements in the new order, and in the old.
    let inNewOrder: [Element]
    let inOldOrder: [Element]

    /// The runs of a list of `oldCount` elements that is now `order`, whose named elements
    /// stood at `old` and stand at `new` (each sorted by position).
    init(old: [Place], new: [Place], order: RowOrder, oldCount: Int) throws(FeedError) {
        let unnamed = oldCount - old.count
        guard unnamed == order.count - new.count else { throw .internalFailure("a patch's elements do not add up") }
        let oldCuts = old.enumerated().map { $0.element.position - $0.offset }
        let newCuts = new.enumerated().map { $0.element.position - $0.offset }
        let cuts = Array(Set(oldCuts + newCuts + [0, unnamed])).sorted()
        var runs: [Run] = []
        var (oldNamed, newNamed) = (0, 0)  // named elements before the run, on each side
        var (oldNamedBytes, newNamedBytes) = (0, 0)
        for (start, end) in zip(cuts, cuts.dropFirst()) where start < end {
            while oldNamed < old.count, oldCuts[oldNamed] <= start {
                oldNamedBytes += old[oldNamed].length
                oldNamed += 1
            }
            while newNamed < new.count, newCuts[newNamed] <= start {
                newNamedBytes += new[newNamed].length
                newNamed += 1
            }
            let (oldStart, newStart, count) = (start + oldNamed, start + newNamed, end - start)
            let newBytesBefore = order.bytes(before: newStart)
            let unnamedBytesBefore = newBytesBefore - newNamedBytes
            runs.append(Run(
                oldStart: oldStart, newStart: newStart, count: count,
                oldOffset: 1 + oldStart + unnamedBytesBefore + oldNamedBytes,
                newOffset: 1 + newStart + newBytesBefore,
                byteCount: order.bytes(before: newStart + count) - newBytesBefore + count - 1
            ))
        }
        self.runs = runs
        inNewOrder = Self.merged(runs.map(\.newStart), new.map(\.position))
        inOldOrder = Self.merged(runs.map(\.oldStart), old.map(\.position))
    }

    /// Runs starting at `runStarts` and named elements at `named` (both ascending), merged
    /// by position.
    private static func merged(_ runStarts: [Int], _ named: [Int]) -> [Element] {
        var elements: [Element] = []
        elements.reserveCapacity(runStarts.count + named.count)
        var next = 0
        for (index, start) in runStarts.enumerated() {
            while next < named.count, named[next] < start {
                elements.append(.named(next))
                next += 1
            }
            elements.append(.run(index))
        }
        elements += named[next...].indices.map { .named($0) }
        return elements
    }

    /// Of `elements` (in new order), those that stay in place: the heaviest run of old
    /// positions rising in new order (``heaviestIncreasingRun(keys:weights:)``), each element
    /// given its old position and weight by `key` (`nil`: not in the old version, so not a
    /// candidate).
    static func staying(_ elements: [Element], key: (Element) -> (oldPosition: Int, weight: Int)?) -> [Bool] {
        let candidates = elements.indices.compactMap { index in key(elements[index]).map { (index, $0) } }
        let kept = heaviestIncreasingRun(keys: candidates.map(\.1.oldPosition), weights: candidates.map(\.1.weight))
        var staying = [Bool](repeating: false, count: elements.count)
        for (candidate, isKept) in zip(candidates, kept) where isKept { staying[candidate.0] = true }
        return staying
    }

    /// Appends to `delta` a list's compact text: `elements` in order between `[` and `]`,
    /// commas between them, each run copied from `run`'s range of the base, each named
    /// element written by `named`.
    static func write(
        _ elements: [Element], into delta: inout TextDelta, run: (Int) -> Range<Int>, named: (Int, inout TextDelta) -> Void
    ) {
        delta.append(literal: [UInt8(ascii: "[")])
        for (index, element) in elements.enumerated() {
            if index > 0 { delta.append(literal: [UInt8(ascii: ",")]) }
            switch element {
            case .run(let index): delta.append(copying: run(index))
            case .named(let index): named(index, &delta)
            }
        }
        delta.append(literal: [UInt8(ascii: "]")])
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
    var heaviest = (weight: 0, element: -1)
    for (element, key) in keys.enumerated() {
        let rank = ranks[key]!
        var below = (weight: 0, element: -1)
        var index = rank - 1
        while index > 0 {
            if best[index].weight > below.weight { below = best[index] }
            index -= index & -index
        }
        let total = below.weight + weights[element]
        previous[element] = below.element
        if total > heaviest.weight { heaviest = (total, element) }
        index = rank
        while index <= keys.count {
            if total > best[index].weight { best[index] = (total, element) }
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
