/// Turns pairings of sections and rows into a batch that UIKit accepts, on indexes alone.
///
/// 1. Paired sections that keep their relative order (a longest increasing subsequence,
///    preferring sections that change inside) stay; the other paired sections move. With
///    moves off, the sections that stay are those keeping the most rows in place (then the
///    most sections): every row of a section that does not stay is deleted and inserted.
/// 2. A moving section must not change inside (UIKit crashes on row operations in a moving
///    section): one that does is sent as a section delete plus a section insert.
/// 3. Within each staying section, the rows that keep their relative order stay (reloaded
///    if their content changed); the others move, or are deleted and inserted again when
///    their content also changed (a reload of a moving row collides with the move). Among
///    the longest runs, one that keeps the most changed rows in place is taken, so that the
///    rows that move are the unchanged ones where any can be.
///
/// These rules have a second home: a `PATCH` plans its batch from what its ops name alone,
/// without a diff (the feed core's `ListPatchChange`, `SectionedPatchChange` and
/// `UnnamedRuns`), and must keep them too. A change here is a change there;
/// `PatchPlannerTests` plans random patches both ways and holds the patch's batch to apply
/// and to be no larger than this planner's.
@usableFromInline
struct BatchPlanner {
    let old: CollectionShape
    let new: CollectionShape
    private var sections: Pairing
    private var rows: Pairing
    /// For each old row: whether it is paired and its partner has the same content.
    private var rowUnchanged: [Bool]
    /// For each old section: whether it is paired and its partner has the same header.
    private let headerUnchanged: [Bool]
    private let allowsMoves: Bool
    /// For each new section: whether it moves.
    private var moving: [Bool]

    @usableFromInline
    init(
        old: CollectionShape, new: CollectionShape, sections: Pairing, rows: Pairing,
        rowUnchanged: [Bool], headerUnchanged: [Bool], allowsMoves: Bool
    ) {
        self.old = old
        self.new = new
        self.sections = sections
        self.rows = rows
        self.rowUnchanged = rowUnchanged
        self.headerUnchanged = headerUnchanged
        self.allowsMoves = allowsMoves
        moving = [Bool](filling: false, count: new.sectionCount)
    }

    /// Decides which sections move, and unpairs those that cannot (they change inside, or
    /// moves are off), with their rows.
    @usableFromInline
    mutating func settleSectionMoves() {
        let paired = (0..<new.sectionCount).filter { sections.partner(ofNew: $0) != nil }
        guard paired.count > 1 else { return }
        // Among the longest runs, the one that keeps the most sections changing inside wins;
        // with moves off, the run that keeps the most rows in place, then the longest.
        let weights = allowsMoves
            ? paired.map { paired.count + 1 + (isUnchangedInside(new: $0) ? 0 : 1) }
            : paired.map { (paired.count + 1) * rowsKeptInPlace(new: $0) + 1 }
        let staying = heaviestIncreasingSubsequence(paired.map { sections.partner(ofNew: $0)! }, weights: weights)
        for (position, newSection) in paired.enumerated() where !staying[position] {
            if allowsMoves && isUnchangedInside(new: newSection) {
                moving[newSection] = true
                continue
            }
            let oldSection = sections.partner(ofNew: newSection)!
            for index in old.rows(of: oldSection) { rows.unpair(old: index) }
            sections.unpair(old: oldSection)
        }
    }

    /// How many rows of the paired new section `newSection` stay in place if it stays: a
    /// longest run of its rows paired within its old partner that keeps their order.
    private func rowsKeptInPlace(new newSection: Int) -> Int {
        let oldRows = old.rows(of: sections.partner(ofNew: newSection)!)
        let newRows = new.rows(of: newSection)
        let partners = partners(of: newRows, within: oldRows)
        guard !keepsOrder(newRows, within: oldRows) else { return partners.count }
        return longestIncreasingSubsequence(partners, within: oldRows).count { $0 }
    }

    /// Whether a paired new section holds the same rows as its old partner, in the same
    /// order, unchanged.
    private func isUnchangedInside(new newSection: Int) -> Bool {
        let oldRows = old.rows(of: sections.partner(ofNew: newSection)!)
        let newRows = new.rows(of: newSection)
        guard oldRows.count == newRows.count else { return false }
        return zip(oldRows, newRows).allSatisfy { rows.partner(ofOld: $0) == $1 && rowUnchanged[$0] }
    }

    /// The rows left unpaired in staying sections (paired, not moving), old and new, each
    /// in collection order.
    @usableFromInline
    func unpairedRowsOfStayingSections() -> (old: [Int], new: [Int]) {
        let staying = (0..<new.sectionCount).filter { sections.partner(ofNew: $0) != nil && !moving[$0] }
        guard staying.count > 1 else { return ([], []) }
        // Filtered section by section: all rows of the staying sections at once would take
        // 16 bytes a row even when every row is paired already.
        let oldRows = staying.map { sections.partner(ofNew: $0)! }.sorted().flatMap { old.rows(of: $0).filter { rows.partner(ofOld: $0) == nil } }
        let newRows = staying.flatMap { new.rows(of: $0).filter { rows.partner(ofNew: $0) == nil } }
        return (oldRows, newRows)
    }

    /// How the rows are paired so far.
    @usableFromInline
    var rowPairing: Pairing { rows }

    /// Pairs two rows of different staying sections.
    @usableFromInline
    mutating func pairRows(old oldIndex: Int, new newIndex: Int, unchanged: Bool) {
        rows.pair(old: oldIndex, new: newIndex)
        rowUnchanged[oldIndex] = unchanged
    }

    @usableFromInline
    func batch() -> SectionedBatch {
        SectionedBatch(sections: sectionChanges(), rows: rowChanges(), oldCounts: old.counts, newCounts: new.counts)
    }

    private func sectionChanges() -> SectionChanges {
        var changes = SectionChanges()
        changes.deleted = (0..<old.sectionCount).filter { sections.partner(ofOld: $0) == nil }
        for newSection in 0..<new.sectionCount {
            guard let oldSection = sections.partner(ofNew: newSection) else {
                changes.inserted.append(newSection)
                continue
            }
            if moving[newSection] { changes.moved.append(Move(from: oldSection, to: newSection)) }
            if !headerUnchanged[oldSection] { changes.updated.append(newSection) }
        }
        changes.moved.sort { $0.from < $1.from }
        return changes
    }

    private func rowChanges() -> RowChanges<RowPath> {
        var changes = RowChanges<RowPath>()
        func moveOrReplace(old oldIndex: Int, at oldPath: RowPath, new newPath: RowPath) {
            if allowsMoves && rowUnchanged[oldIndex] {
                changes.moved.append(Move(from: oldPath, to: newPath))
            } else {
                changes.deleted.append(oldPath)
                changes.inserted.append(newPath)
            }
        }
        for newSection in 0..<new.sectionCount where !moving[newSection] {
            guard let oldSection = sections.partner(ofNew: newSection) else { continue }
            let oldRows = old.rows(of: oldSection)
            for oldIndex in oldRows where rows.partner(ofOld: oldIndex) == nil {
                changes.deleted.append(old.path(of: oldIndex, in: oldSection))
            }
            let newRows = new.rows(of: newSection)
            // The rows paired within the section stay where they keep their relative order.
            // Usually all of them do, and no subsequence needs finding (nor any memory).
            let staying = keepsOrder(newRows, within: oldRows) ? nil : stayingRows(partners(of: newRows, within: oldRows), within: oldRows)
            var position = 0
            for newIndex in newRows {
                let newPath = new.path(of: newIndex, in: newSection)
                guard let oldIndex = rows.partner(ofNew: newIndex) else {
                    changes.inserted.append(newPath)
                    continue
                }
                guard oldRows.contains(oldIndex) else {
                    moveOrReplace(old: oldIndex, at: old.path(of: oldIndex), new: newPath)
                    continue
                }
                let oldPath = old.path(of: oldIndex, in: oldSection)
                if let staying, !staying[position] {
                    moveOrReplace(old: oldIndex, at: oldPath, new: newPath)
                } else if !rowUnchanged[oldIndex] {
                    changes.reloaded.append(oldPath)
                }
                position += 1
            }
        }
        changes.deleted.sort()
        changes.inserted.sort()
        changes.reloaded.sort()
        changes.moved.sort { $0.from < $1.from }
        return changes
    }

    /// Which of `partners` (old rows of one section, in new order) stay: a longest run that
    /// keeps their order and, with moves on, of those the one that keeps the most changed
    /// rows (a changed row that does not stay is deleted and inserted; an unchanged one
    /// moves). The weighed search runs only when the first run found leaves a changed row out.
    private func stayingRows(_ partners: [Int], within oldRows: Range<Int>) -> [Bool] {
        let longest = longestIncreasingSubsequence(partners, within: oldRows)
        guard allowsMoves, zip(partners, longest).contains(where: { !$1 && !rowUnchanged[$0] }) else { return longest }
        let weights = partners.map { partners.count + 1 + (rowUnchanged[$0] ? 0 : 1) }
        return heaviestIncreasingSubsequence(partners.map { $0 - oldRows.lowerBound }, weights: weights)
    }

    /// The old partner of the new row `newIndex` when it lies in `oldRows`.
    private func partnerWithin(_ oldRows: Range<Int>, ofNew newIndex: Int) -> Int? {
        rows.partner(ofNew: newIndex).flatMap { oldRows.contains($0) ? $0 : nil }
    }

    /// The partners of the rows of `newRows` paired within `oldRows`, in order.
    private func partners(of newRows: Range<Int>, within oldRows: Range<Int>) -> [Int] {
        var partners: [Int] = []
        partners.reserveCapacity(min(newRows.count, oldRows.count))
        for newIndex in newRows {
            if let oldIndex = partnerWithin(oldRows, ofNew: newIndex) { partners.append(oldIndex) }
        }
        return partners
    }

    /// Whether the rows of `newRows` paired within `oldRows` have their partners in order.
    private func keepsOrder(_ newRows: Range<Int>, within oldRows: Range<Int>) -> Bool {
        var last = -1
        for newIndex in newRows {
            guard let oldIndex = partnerWithin(oldRows, ofNew: newIndex) else { continue }
            guard oldIndex > last else { return false }
            last = oldIndex
        }
        return true
    }
}
