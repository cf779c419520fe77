/// One step of an adapter's update, as Android's `RecyclerView.Adapter` and
/// `ListUpdateCallback` take them (docs/batch-format.md §7): positions are counted in the
/// list as it is when the step is applied, steps one after another.
public enum Step: Hashable, Sendable {
    /// `count` items leave from position `at` on.
    case remove(at: Int, count: Int)
    /// `count` new items arrive at position `at` on.
    case insert(at: Int, count: Int)
    /// The item at `from` is taken out and put back at `to`.
    case move(from: Int, to: Int)
    /// The `count` items from position `at` on keep their place but change content.
    case change(at: Int, count: Int)
}

extension SectionedBatch {
    /// This batch as steps on the flat list an adapter shows: each section one header
    /// position followed by its rows.
    ///
    /// The steps are removes (from the end backwards), moves, inserts and changes, ranges
    /// merged where positions are adjacent. Inserts and changes come last, at their final
    /// positions: `at..<at + count` are positions of the new flat list. The moves keep the
    /// longest run of items that can stay in place, so never more items move than the
    /// batch moves. Throws ``BatchError`` when the batch does not fit its counts.
    ///
    /// - Complexity: O(n log n) for n flat positions.
    public func steps() throws -> [Step] {
        try Steps(self, headers: true).steps
    }
}

extension ListBatch {
    /// This batch as steps on the list (``SectionedBatch/steps()`` without headers).
    public func steps() throws -> [Step] {
        try Steps(sectioned, headers: false).steps
    }

    /// Where each reloaded row lands in the new list, aligned with `rows.reloaded`: the
    /// positions the steps' changes cover.
    public func changePositions() throws -> [Int] {
        try sectioned.changePositions(placement: Placement(sectioned), headers: false).rows
    }
}

extension SectionedBatch {
    /// Where each content change lands in the new flat list (headers included, as
    /// ``steps()`` counts positions): each reloaded row's, aligned with `rows.reloaded`, and
    /// each updated section's header's, aligned with `sections.updated`.
    public func changePositions() throws -> (rows: [Int], sections: [Int]) {
        try changePositions(placement: Placement(self), headers: true)
    }

    /// ``changePositions()`` for a placement made already; without `headers`, positions
    /// count rows alone (a list's) and no section is named.
    fileprivate func changePositions(placement: Placement, headers: Bool) -> (rows: [Int], sections: [Int]) {
        let header = headers ? 1 : 0
        var newStarts: [Int] = []
        var count = 0
        for rows in newCounts {
            newStarts.append(count)
            count += header + rows
        }
        let rows = placement.newPaths(of: self.rows.reloaded).map { newStarts[$0.section] + header + $0.row }
        return (rows, headers ? sections.updated.map { newStarts[$0] } : [])
    }
}

/// A sectioned batch as steps at two levels, for a document that keeps rows inside their
/// sections (an RFC 6902 JSON Patch): first the steps on each section's rows, each section
/// still at its old index; then the steps on the sections themselves.
public struct NestedSteps: Sendable {
    /// For each old section that stays or moves, in old order: its old and new index, and
    /// the steps that turn its rows into those of its new section. Rows that come from
    /// another section are inserted there (and removed where they were); inserts and
    /// changes are at positions of the new section's rows.
    public var rows: [(oldSection: Int, newSection: Int, steps: [Step])]
    /// The steps on the sections once their rows are done: removes, moves and inserts (of
    /// whole new sections), never a change.
    public var sections: [Step]
}

extension SectionedBatch {
    /// This batch as ``NestedSteps``.
    public func nestedSteps() throws -> NestedSteps {
        let placement = try Placement(self)
        var rows: [(oldSection: Int, newSection: Int, steps: [Step])] = []
        var newSectionOfOld = [Int?](filling: nil, count: oldCounts.count)
        for (newSection, origin) in placement.sections.enumerated() {
            if case .old(let oldSection) = origin { newSectionOfOld[oldSection] = newSection }
        }
        let reloaded = Set(self.rows.reloaded)
        for (oldSection, landing) in newSectionOfOld.enumerated() {
            guard let newSection = landing else { continue }
            var changed: [Int] = []
            let origins = (placement.rows[newSection] ?? []).enumerated().map { row, origin -> Int? in
                guard case .old(let path) = origin, path.section == oldSection else { return nil }
                if reloaded.contains(path) { changed.append(row) }
                return path.row
            }
            rows.append((oldSection, newSection, Steps(oldCount: oldCounts[oldSection], origins: origins, changed: changed).steps))
        }
        let sectionChanges = ListBatch(
            rows: RowChanges(deleted: sections.deleted, inserted: sections.inserted, moved: sections.moved),
            oldCount: oldCounts.count, newCount: newCounts.count
        )
        return NestedSteps(rows: rows, sections: try sectionChanges.steps())
    }
}

/// The steps of a batch: where each position of the new flat list comes from, then the
/// steps that get there.
private struct Steps {
    var steps: [Step] = []

    init(_ batch: SectionedBatch, headers: Bool) throws {
        let placement = try Placement(batch)
        let header = headers ? 1 : 0
        // Where each old section starts in the old flat list (its header, if any).
        var oldStarts: [Int] = []
        var oldCount = 0
        for rows in batch.oldCounts {
            oldStarts.append(oldCount)
            oldCount += header + rows
        }
        // For each new flat position, the old flat position it comes from (nil: inserted).
        var origins: [Int?] = []
        for (newSection, section) in placement.sections.enumerated() {
            switch section {
            case .inserted:
                origins += [Int?](filling: nil, count: header + batch.newCounts[newSection])
            case .old(let oldSection):
                if headers { origins.append(oldStarts[oldSection]) }
                for row in placement.rows[newSection] ?? [] {
                    switch row {
                    case .inserted: origins.append(nil)
                    case .old(let path): origins.append(oldStarts[path.section] + header + path.row)
                    }
                }
            }
        }
        let changed = batch.changePositions(placement: placement, headers: headers)
        self.init(oldCount: oldCount, origins: origins, changed: changed.rows + changed.sections)
    }

    /// The steps from a list of `oldCount` elements to the one where position `p` holds old
    /// element `origins[p]` (nil: a new one), `changed` naming positions whose content changes.
    init(oldCount: Int, origins: [Int?], changed: [Int]) {
        removes(oldCount: oldCount, kept: origins)
        moves(kept: origins.compactMap { $0 })
        ranges(of: origins.indices.filter { origins[$0] == nil }, as: Step.insert)
        ranges(of: changed.sorted(), as: Step.change)
    }

    /// The old positions no new position comes from, removed from the end backwards.
    private mutating func removes(oldCount: Int, kept: [Int?]) {
        var stays = [Bool](filling: false, count: oldCount)
        for case let origin? in kept { stays[origin] = true }
        var end = oldCount
        while end > 0 {
            guard !stays[end - 1] else {
                end -= 1
                continue
            }
            var start = end - 1
            while start > 0 && !stays[start - 1] { start -= 1 }
            steps.append(.remove(at: start, count: end - start))
            end = start
        }
    }

    /// Moves that put `kept` (old positions, in new order) in order: the longest run that is
    /// already in order stays, and each other element goes right after the one before it in
    /// the new order, in new order.
    ///
    /// Positions come from a Fenwick tree over old positions, so each move costs O(log n).
    /// At any moment the list holds the staying elements and the elements not moved yet at
    /// their old positions, and each moved element right after its *anchor*: the nearest
    /// staying element before it in the new order (or the front). The tree counts every
    /// element at its old position, a moved one at its anchor's, so the elements before an
    /// element not moved yet (or a staying one) are those counted below its old position.
    private mutating func moves(kept: [Int]) {
        let stays = longestIncreasingSubsequence(kept)
        // Keys: 0 is the front; old position p is p + 1.
        var tree = FenwickTree(count: (kept.max() ?? 0) + 2)
        for old in kept { tree.add(1, at: old + 1) }
        var anchor = (key: 0, newIndex: -1)  // the front
        for (newIndex, old) in kept.enumerated() {
            if stays[newIndex] {
                anchor = (old + 1, newIndex)
                continue
            }
            let from = tree.count(below: old + 1)
            tree.add(-1, at: old + 1)
            // Right after the anchor and the moved elements that follow it in the new order.
            let anchorIndex = anchor.key == 0 ? -1 : tree.count(below: anchor.key)
            let to = anchorIndex + (newIndex - anchor.newIndex)
            tree.add(1, at: anchor.key)
            steps.append(.move(from: from, to: to))
        }
    }

    /// One step per run of adjacent positions in `positions` (ascending).
    private mutating func ranges(of positions: [Int], as step: (Int, Int) -> Step) {
        var index = 0
        while index < positions.count {
            var end = index + 1
            while end < positions.count && positions[end] == positions[end - 1] + 1 { end += 1 }
            steps.append(step(positions[index], end - index))
            index = end
        }
    }
}

/// Counts of keys `0..<count`, with prefix sums in O(log n).
private struct FenwickTree {
    private var sums: [Int]

    init(count: Int) {
        sums = [Int](filling: 0, count: count + 1)
    }

    mutating func add(_ value: Int, at key: Int) {
        var index = key + 1
        while index < sums.count {
            sums[index] += value
            index += index & -index
        }
    }

    /// The sum of the counts of the keys below `key`.
    func count(below key: Int) -> Int {
        var index = key
        var total = 0
        while index > 0 {
            total += sums[index]
            index -= index & -index
        }
        return total
    }
}

