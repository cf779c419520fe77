/// Computes the batch between two sectioned collections.
///
/// 1. Sections are paired by identity; the paired sections that keep their relative order
///    (a longest increasing subsequence) stay, the others move.
/// 2. Rows are paired within each pair of sections, then the rest across sections.
/// 3. A moving section must not change inside (UIKit crashes on row operations in a moving
///    section): one that does is sent as a section delete plus a section insert.
/// 4. Within each staying section, the rows that keep their relative order stay (reloaded
///    if their content changed); the others move, or are deleted and inserted again when
///    their content also changed (a reload of a moving row collides with the move).
struct SectionedDiffer<Header: Diffable, Item: Diffable> {
    let old: FlatCollection<Header, Item>
    let new: FlatCollection<Header, Item>
    let options: DiffOptions

    func batch() -> SectionedBatch {
        var sections = Pairing(oldCount: old.headers.count, newCount: new.headers.count)
        sections.pair(old: old.headers, old.headers.indices, new: new.headers, new.headers.indices)
        var rows = Pairing(oldCount: old.items.count, newCount: new.items.count)
        for newSection in new.headers.indices {
            guard let oldSection = sections.partner(ofNew: newSection) else { continue }
            rows.pair(old: old.items, old.rows(of: oldSection), new: new.items, new.rows(of: newSection))
        }
        let moving = movingSections(sections, rows: rows)
        for newSection in new.headers.indices where moving[newSection] {
            let oldSection = sections.partner(ofNew: newSection)!
            if options.allowsMoves && isUnchangedInside(old: oldSection, new: newSection, rows: rows) { continue }
            // A section that moves and changes inside is sent as a delete plus an insert.
            for index in old.rows(of: oldSection) { rows.unpair(old: index) }
            sections.unpair(old: oldSection)
        }
        let stillMoving = moving.indices.map { moving[$0] && sections.partner(ofNew: $0) != nil }
        pairAcrossSections(&rows, sections: sections, moving: stillMoving)
        return SectionedBatch(
            sections: sectionChanges(sections, moving: stillMoving),
            rows: rowChanges(rows, sections: sections, moving: stillMoving),
            oldCounts: old.counts,
            newCounts: new.counts
        )
    }

    /// For each new section: whether it is paired and outside the longest run of paired
    /// sections that keep their relative order. Among runs of equal length, the one that
    /// keeps the most sections that change inside wins, since those cannot move.
    private func movingSections(_ sections: Pairing, rows: Pairing) -> [Bool] {
        let paired = new.headers.indices.filter { sections.partner(ofNew: $0) != nil }
        let weights = paired.map { newSection in
            paired.count + 1 + (isUnchangedInside(old: sections.partner(ofNew: newSection)!, new: newSection, rows: rows) ? 0 : 1)
        }
        let staying = heaviestIncreasingSubsequence(paired.map { sections.partner(ofNew: $0)! }, weights: weights)
        var moving = [Bool](repeating: false, count: new.headers.count)
        for (position, newSection) in paired.enumerated() where !staying[position] { moving[newSection] = true }
        return moving
    }

    /// Whether the rows of a section pair are the same rows, in the same order, unchanged.
    private func isUnchangedInside(old oldSection: Int, new newSection: Int, rows: Pairing) -> Bool {
        let oldRows = old.rows(of: oldSection)
        let newRows = new.rows(of: newSection)
        guard oldRows.count == newRows.count else { return false }
        return zip(oldRows, newRows).allSatisfy { oldIndex, newIndex in
            rows.partner(ofOld: oldIndex) == newIndex && old.items[oldIndex].isContentEqual(to: new.items[newIndex])
        }
    }

    /// Pairs the rows left unpaired in staying sections with each other, across sections.
    private func pairAcrossSections(_ rows: inout Pairing, sections: Pairing, moving: [Bool]) {
        let stayingNew = new.headers.indices.filter { sections.partner(ofNew: $0) != nil && !moving[$0] }
        guard stayingNew.count > 1 else { return }
        let stayingOld = stayingNew.map { sections.partner(ofNew: $0)! }.sorted()
        let oldLeft = stayingOld.flatMap { old.rows(of: $0) }.filter { rows.partner(ofOld: $0) == nil }
        let newLeft = stayingNew.flatMap { new.rows(of: $0) }.filter { rows.partner(ofNew: $0) == nil }
        rows.pair(old: old.items, oldLeft, new: new.items, newLeft)
    }

    private func sectionChanges(_ sections: Pairing, moving: [Bool]) -> SectionChanges {
        var changes = SectionChanges()
        changes.deleted = old.headers.indices.filter { sections.partner(ofOld: $0) == nil }
        for newSection in new.headers.indices {
            guard let oldSection = sections.partner(ofNew: newSection) else {
                changes.inserted.append(newSection)
                continue
            }
            if moving[newSection] { changes.moved.append(Move(from: oldSection, to: newSection)) }
            if !old.headers[oldSection].isContentEqual(to: new.headers[newSection]) { changes.updated.append(newSection) }
        }
        changes.moved.sort { $0.from < $1.from }
        return changes
    }

    private func rowChanges(_ rows: Pairing, sections: Pairing, moving: [Bool]) -> RowChanges<IndexPath> {
        var changes = RowChanges<IndexPath>()
        func moveOrReplace(old oldIndex: Int, at oldPath: IndexPath, new newIndex: Int, at newPath: IndexPath) {
            if options.allowsMoves && old.items[oldIndex].isContentEqual(to: new.items[newIndex]) {
                changes.moved.append(Move(from: oldPath, to: newPath))
            } else {
                changes.deleted.append(oldPath)
                changes.inserted.append(newPath)
            }
        }
        for newSection in new.headers.indices where !moving[newSection] {
            guard let oldSection = sections.partner(ofNew: newSection) else { continue }
            let oldRows = old.rows(of: oldSection)
            for oldIndex in oldRows where rows.partner(ofOld: oldIndex) == nil {
                changes.deleted.append(old.path(of: oldIndex, in: oldSection))
            }
            var stayCandidates: [(old: Int, new: Int)] = []
            for newIndex in new.rows(of: newSection) {
                let newPath = new.path(of: newIndex, in: newSection)
                guard let oldIndex = rows.partner(ofNew: newIndex) else {
                    changes.inserted.append(newPath)
                    continue
                }
                if oldRows.contains(oldIndex) {
                    stayCandidates.append((oldIndex, newIndex))
                } else {
                    moveOrReplace(old: oldIndex, at: old.path(of: oldIndex), new: newIndex, at: newPath)
                }
            }
            let staying = longestIncreasingSubsequence(stayCandidates.map(\.old))
            for (position, pair) in stayCandidates.enumerated() {
                let oldPath = old.path(of: pair.old, in: oldSection)
                if !staying[position] {
                    moveOrReplace(old: pair.old, at: oldPath, new: pair.new, at: new.path(of: pair.new, in: newSection))
                } else if !old.items[pair.old].isContentEqual(to: new.items[pair.new]) {
                    changes.reloaded.append(oldPath)
                }
            }
        }
        changes.deleted.sort()
        changes.inserted.sort()
        changes.reloaded.sort()
        changes.moved.sort { $0.from < $1.from }
        return changes
    }
}
