import BatchDiff

/// An independent check of the rules of docs/batch-format.md §4 on a batch between two
/// sectioned collections, written without the differ's code, rows the same row when
/// `identity` says so. Returns the broken rules.
public func brokenRules<Header, Item: Hashable, Identity: Hashable>(
    _ batch: SectionedBatch, old: [Section<Header, Item>], new: [Section<Header, Item>], identity: (Item) -> Identity, allowsMoves: Bool = true
) -> [String] {
    var broken: [String] = []
    func check(_ condition: Bool, _ rule: @autoclosure () -> String) { if !condition { broken.append(rule()) } }
    let s = batch.sections
    let r = batch.rows

    check(batch.oldCounts == old.map(\.items.count), "counts.old matches the old collection")
    check(batch.newCounts == new.map(\.items.count), "counts.new matches the new collection")
    for (name, list) in [("sections.deleted", s.deleted), ("sections.inserted", s.inserted), ("sections.updated", s.updated)] {
        check(list == Array(Set(list)).sorted(), "\(name) sorted without repeats")
    }
    for (name, list) in [("rows.deleted", r.deleted), ("rows.inserted", r.inserted), ("rows.reloaded", r.reloaded)] {
        check(list == Array(Set(list)).sorted(), "\(name) sorted without repeats")
    }
    check(s.moved.map(\.from) == s.moved.map(\.from).sorted(), "sections.moved sorted by from")
    check(r.moved.map(\.from) == r.moved.map(\.from).sorted(), "rows.moved sorted by from")
    if !allowsMoves { check(s.moved.isEmpty && r.moved.isEmpty, "no moves when moves are off") }

    // Sections: ranges, no index twice, balance.
    let oldSectionSources = s.deleted + s.moved.map(\.from)
    let newSectionTargets = s.inserted + s.moved.map(\.to)
    check(oldSectionSources.allSatisfy { old.indices.contains($0) }, "section deletes and move sources inside the old collection")
    check((newSectionTargets + s.updated).allSatisfy { new.indices.contains($0) }, "section inserts, move targets, updates inside the new collection")
    check(Set(oldSectionSources).count == oldSectionSources.count, "no old section both deleted and moved")
    check(Set(newSectionTargets).count == newSectionTargets.count, "no new section both inserted and moved")
    check(new.count == old.count - s.deleted.count + s.inserted.count, "section count balances")
    check(Set(s.updated).isDisjoint(with: s.inserted), "an inserted section is never updated")

    // Which old section each new section comes from, by the fill rule.
    var origin = [Int?](repeating: nil, count: new.count)
    for move in s.moved where new.indices.contains(move.to) { origin[move.to] = move.from }
    var staying = old.indices.filter { !oldSectionSources.contains($0) }.makeIterator()
    for n in new.indices where origin[n] == nil && !s.inserted.contains(n) { origin[n] = staying.next() }
    let movedOld = Set(s.moved.map(\.from))
    let movedNew = Set(s.moved.map(\.to))

    // Rows: ranges, no path twice, forbidden sections.
    let oldPaths = r.deleted + r.reloaded + r.moved.map(\.from)
    let newPaths = r.inserted + r.moved.map(\.to)
    check(oldPaths.allSatisfy { old.indices.contains($0.section) && old[$0.section].items.indices.contains($0.row) },
          "row deletes, reloads, move sources inside the old collection")
    check(newPaths.allSatisfy { new.indices.contains($0.section) && new[$0.section].items.indices.contains($0.row) },
          "row inserts and move targets inside the new collection")
    check(Set(oldPaths).count == oldPaths.count, "no old row path in two of deleted, reloaded, move source")
    check(Set(newPaths).count == newPaths.count, "no new row path in two of inserted, move target")
    check(oldPaths.allSatisfy { !s.deleted.contains($0.section) }, "no row operation inside a deleted section")
    check(newPaths.allSatisfy { !s.inserted.contains($0.section) }, "no row operation inside an inserted section")
    check(oldPaths.allSatisfy { !movedOld.contains($0.section) } && newPaths.allSatisfy { !movedNew.contains($0.section) },
          "no row operation touching a moving section")

    // Rows: every section's count balances.
    for n in new.indices {
        guard let o = origin[n], !s.inserted.contains(n), old.indices.contains(o) else { continue }
        let expected = old[o].items.count - r.deleted.filter { $0.section == o }.count
            - r.moved.filter { $0.from.section == o }.count + r.inserted.filter { $0.section == n }.count
            + r.moved.filter { $0.to.section == n }.count
        check(new[n].items.count == expected, "row count of new section \(n) balances")
    }

    // Smallness: no delete plus insert of the same unchanged row between staying sections
    // where a move would do (for identities that appear once on each side; repeats pair in order).
    if allowsMoves {
        var occurrences = [Identity: Int]()
        for row in old.flatMap(\.items) + new.flatMap(\.items) { occurrences[identity(row), default: 0] += 1 }
        let stayingOld = Set(origin.compactMap { $0 }).subtracting(movedOld)
        let deletedRows = r.deleted.filter { stayingOld.contains($0.section) }.map { old[$0.section].items[$0.row] }
        let insertedRows = r.inserted.filter { !movedNew.contains($0.section) && origin[$0.section] != nil }
            .map { new[$0.section].items[$0.row] }
        check(Set(deletedRows).isDisjoint(with: insertedRows.filter { occurrences[identity($0)] == 2 }), "no delete plus insert of an unchanged row where a move would do")
    }
    return broken
}
