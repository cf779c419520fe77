import BatchDiff
import BatchDiffJSON

/// What a patch did to a sectioned collection (``PatchedSections``), found from what it
/// named alone, as the differ would have it (docs/batch-format.md §5): sections paired by
/// identity; among the runs of sections the patch did not name and the named sections that
/// stay, those whose old positions rise in the new order with the most sections stay (the
/// most that change inside, among equally many); every other one moves when unchanged
/// inside, else is deleted and inserted. Rows of a staying section are planned as a list's
/// (``ListPatchChange/Plan``); a row that goes from one staying section to another moves,
/// or is deleted and inserted when it changed; rows come and go with the sections that do.
/// Its cost is what the patch names (and the rows of the sections it removes or adds) times
/// a logarithm, plus the two lists of rows per section every batch carries.
struct SectionedPatchChange {
    /// A named section: where it stood and what it was, where it stands and its node now.
    private struct Named {
        let identity: Fingerprint
        let old: PatchedSections.SectionBefore?
        let new: (node: Int32, placed: RowOrder.PlacedRow)?
        /// Its rows, as a list's (each with its section's rows only).
        var rows: [ListPatchChange.Named] = []

        /// Whether its rows changed: a row came or went, moved or changed.
        var changesInside: Bool {
            rows.contains { row in
                guard let old = row.old, let new = row.new else { return true }
                return old.position != new.position || row.isChanged
            }
        }
    }

    /// A row that went from one named section to another: its place in each.
    private struct Crossing {
        let from: Fingerprint
        let to: Fingerprint
        let old: RowOrder.PlacedRow
        let new: RowOrder.PlacedRow

        var isChanged: Bool { old.content != new.content }
    }

    /// A named section that stays: where it stood and where it stands.
    private struct Staying {
        let from: Int
        let to: Int
    }

    private let patched: PatchedSections
    private var collection: SectionedRows { patched.rows }
    private let named: [Named]
    /// Each named section's rows planned as a list's (``ListPatchChange/Plan``).
    private let plans: [ListPatchChange.Plan]
    private let crossings: [Crossing]
    /// The named sections on each side, by position (indexes into `named`).
    private let byOld: [Int]
    private let byNew: [Int]
    private let runs: UnnamedRuns

    /// What `patched` did, as the batch and the changes of text a ``PatchChange`` holds.
    static func change(of patched: PatchedSections) throws(FeedError) -> PatchChange {
        try SectionedPatchChange(patched).change()
    }

    private init(_ patched: PatchedSections) throws(FeedError) {
        self.patched = patched
        let collection = patched.rows
        let (named, crossings) = Self.namedSections(of: patched)
        var plans: [ListPatchChange.Plan] = []
        for section in named {
            let order = section.new.map { collection[$0.node].rows } ?? RowOrder(items: [JSONItem]())
            plans.append(try ListPatchChange.Plan(section.rows, order: order, oldCount: section.old?.rowCount ?? 0))
        }
        let old = named.indices.compactMap { index in named[index].old.map { (index, $0.placed) } }.sorted { $0.1.position < $1.1.position }
        let new = named.indices.compactMap { index in named[index].new.map { (index, $0.placed) } }.sorted { $0.1.position < $1.1.position }
        runs = try UnnamedRuns(
            old: old.map { UnnamedRuns.Place(position: $0.1.position, length: $0.1.length) },
            new: new.map { UnnamedRuns.Place(position: $0.1.position, length: $0.1.length) },
            order: collection.order, oldCount: patched.oldSectionCount
        )
        (self.named, self.plans, self.crossings, byOld, byNew) = (named, plans, crossings, old.map(\.0), new.map(\.0))
    }

    private func change() -> PatchChange {
        let (sections, staying) = sectionChanges()
        let (rows, inserted, reloaded, reloadedBefore) = rowChanges(staying: staying)
        let texts = collection.texts
        let newNodes = collection.order.rowsInOrder()
        var values = ValueTexts()
        values.insertedRows = inserted.map { texts[$0.location] }
        values.reloadedRows = reloaded.map { texts[$0.location] }
        values.reloadedRowsBefore = reloadedBefore.map { texts[$0.location] }
        values.insertedSections = sections.inserted.map { collection.text(of: newNodes[$0])[...] }
        values.updatedSections = sections.updated.map { collection.headerText(of: newNodes[$0])[...] }
        values.updatedSectionsBefore = headersBefore(updated: sections.updated, newNodes: newNodes)
        // The counts every batch carries: rows per section, old and new.
        let newCounts = newNodes.map { collection[$0].rows.count }
        let batch = SectionedBatch(sections: sections, rows: rows, oldCounts: oldCounts(newCounts: newCounts), newCounts: newCounts)
        let (forward, backward) = textChanges()
        return PatchChange(
            batch: .sectioned(batch), values: values, forward: forward, backward: backward, textCount: collection.textCount,
            leavesTextAsItWas: batch.operationCount == 0 && crossings.isEmpty && named.allSatisfy { section in
                guard let old = section.old, let new = section.new else { return false }
                let now = collection[new.node]
                return old.prefix.elementsEqual(now.prefix) && old.suffix.elementsEqual(now.suffix)
                    && ListPatchChange.keepTheirTexts(section.rows, in: texts)
            }
        )
    }

    /// The batch's sections: which stay, move, are deleted and inserted, and whose header is
    /// updated; and the named sections that stay, by identity.
    private func sectionChanges() -> (SectionChanges, staying: [Fingerprint: Staying]) {
        let kept = UnnamedRuns.staying(runs.inNewOrder) { element in
            switch element {
            case .run(let index): return (runs.runs[index].oldStart, 2 * runs.runs[index].count)
            case .named(let index):
                let section = named[byNew[index]]
                return section.old.map { ($0.placed.position, section.changesInside ? 3 : 2) }
            }
        }
        var sections = SectionChanges()
        var staying: [Fingerprint: Staying] = [:]
        for (element, stays) in zip(runs.inNewOrder, kept) {
            switch element {
            case .run(let index):
                let run = runs.runs[index]
                guard !stays else { continue }
                for section in 0..<run.count { sections.moved.append(Move(from: run.oldStart + section, to: run.newStart + section)) }
            case .named(let index):
                let section = named[byNew[index]]
                guard let old = section.old, let new = section.new else { continue }
                let (from, to) = (old.placed.position, new.placed.position)
                if stays {
                    staying[section.identity] = Staying(from: from, to: to)
                } else if section.changesInside {
                    sections.deleted.append(from)
                    sections.inserted.append(to)
                    continue
                } else {
                    sections.moved.append(Move(from: from, to: to))
                }
                if old.placed.content != new.placed.content { sections.updated.append(to) }
            }
        }
        for section in named {
            if let old = section.old, section.new == nil { sections.deleted.append(old.placed.position) }
            if let new = section.new, section.old == nil { sections.inserted.append(new.placed.position) }
        }
        for list in [\SectionChanges.deleted, \.inserted, \.updated] { sections[keyPath: list].sort() }
        sections.moved.sort { $0.from < $1.from }
        return (sections, staying)
    }

    /// The batch's rows: those of staying sections as each one's plan says, and those that
    /// went from one named section to another; with the new side of each inserted and each
    /// reloaded row, in the batch's order.
    private func rowChanges(
        staying: [Fingerprint: Staying]
    ) -> (RowChanges<RowPath>, inserted: [RowOrder.PlacedRow], reloaded: [RowOrder.PlacedRow], reloadedBefore: [RowOrder.PlacedRow]) {
        var rows = RowChanges<RowPath>()
        var inserted: [(path: RowPath, row: RowOrder.PlacedRow)] = []
        var reloaded: [(path: RowPath, row: RowOrder.PlacedRow, before: RowOrder.PlacedRow)] = []
        for (section, plan) in zip(named, plans) {
            guard let place = staying[section.identity] else { continue }
            rows.deleted += plan.rows.deleted.map { RowPath(section: place.from, row: $0) }
            rows.moved += plan.rows.moved.map { Move(from: RowPath(section: place.from, row: $0.from), to: RowPath(section: place.to, row: $0.to)) }
            inserted += plan.inserted.map { (RowPath(section: place.to, row: $0.position), $0) }
            for (row, (new, old)) in zip(plan.rows.reloaded, zip(plan.reloaded, plan.reloadedBefore)) {
                reloaded.append((RowPath(section: place.from, row: row), new, old))
            }
        }
        for crossing in crossings {
            let oldPath = staying[crossing.from].map { RowPath(section: $0.from, row: crossing.old.position) }
            let newPath = staying[crossing.to].map { RowPath(section: $0.to, row: crossing.new.position) }
            if let oldPath, let newPath, !crossing.isChanged {
                rows.moved.append(Move(from: oldPath, to: newPath))
                continue
            }
            if let oldPath { rows.deleted.append(oldPath) }
            if let newPath { inserted.append((newPath, crossing.new)) }
        }
        inserted.sort { $0.path < $1.path }
        reloaded.sort { $0.path < $1.path }
        rows.deleted.sort()
        rows.inserted = inserted.map(\.path)
        rows.reloaded = reloaded.map(\.path)
        rows.moved.sort { $0.from < $1.from }
        return (rows, inserted.map(\.row), reloaded.map(\.row), reloaded.map(\.before))
    }

    /// The old header text of each section `updated` names (new positions; `newNodes` the
    /// new sections in order), as ``SectionedRows/headerText(of:)`` writes a new one: what a
    /// merge patch of the header is made from.
    private func headersBefore(updated: [Int], newNodes: [Int32]) -> [ArraySlice<UInt8>] {
        var before: [Int32: PatchedSections.SectionBefore] = [:]
        for section in named {
            if let old = section.old, let new = section.new { before[new.node] = old }
        }
        return updated.map { position in
            guard let old = before[newNodes[position]] else { return [] }
            return (Array(old.prefix) + Array("[]".utf8) + Array(old.suffix))[...]
        }
    }

    /// The rows of each old section, given those of each new one (`newCounts`): a run of
    /// sections the patch did not name has the same rows on both sides.
    private func oldCounts(newCounts: [Int]) -> [Int] {
        var oldCounts: [Int] = []
        oldCounts.reserveCapacity(patched.oldSectionCount)
        for element in runs.inOldOrder {
            switch element {
            case .run(let index): oldCounts += newCounts[runs.runs[index].newStart..<runs.runs[index].newStart + runs.runs[index].count]
            case .named(let index): oldCounts.append(named[byOld[index]].old?.rowCount ?? 0)
            }
        }
        return oldCounts
    }

    /// The new text as a change of the old, and the old as a change of the new: the
    /// collection's brackets and the runs of sections the patch did not name copied, each
    /// named section written by its plan.
    private func textChanges() -> (forward: TextDelta, backward: TextDelta) {
        let outer = (prefix: collection.outer.prefix.count, suffix: collection.outer.suffix.count)
        var forward = TextDelta(over: patched.oldTextCount)
        forward.append(copying: 0..<outer.prefix)
        UnnamedRuns.write(runs.inNewOrder, into: &forward, run: { runs.runs[$0].oldText.shifted(by: outer.prefix) }) { index, delta in
            write(new: byNew[index], into: &delta)
        }
        forward.append(copying: patched.oldTextCount - outer.suffix..<patched.oldTextCount)
        var backward = TextDelta(over: collection.textCount)
        backward.append(copying: 0..<outer.prefix)
        UnnamedRuns.write(runs.inOldOrder, into: &backward, run: { runs.runs[$0].newText.shifted(by: outer.prefix) }) { index, delta in
            write(old: byOld[index], into: &delta)
        }
        backward.append(copying: collection.textCount - outer.suffix..<collection.textCount)
        forward.trimCapacity()
        backward.trimCapacity()
        return (forward, backward)
    }

    /// The sections the patch named, each with its rows as a list's, and the rows that went
    /// from one named section to another.
    private static func namedSections(of patched: PatchedSections) -> ([Named], [Crossing]) {
        let collection = patched.rows
        var identities = Set(patched.sectionsBefore.keys).union(patched.addedSections)
        // (A section the ops named that was not there and was not added: a refused op's.)
        identities = identities.filter { patched.sectionsBefore[$0] != nil || collection.order.row($0) != .none }
        var named: [Fingerprint: Named] = [:]
        for identity in identities {
            var new: (Int32, RowOrder.PlacedRow)?
            if case .row(let node) = collection.order.row(identity) { new = (node, collection.order.placed(node)) }
            named[identity] = Named(identity: identity, old: patched.sectionsBefore[identity], new: new)
        }
        var crossings: [Crossing] = []
        var oldOnly: [Fingerprint: [PatchedSections.RowBefore]] = [:]
        var newOnly: [Fingerprint: [(identity: Fingerprint, row: RowOrder.PlacedRow)]] = [:]
        for (key, before) in patched.touched {
            let section = collection.order.identity(of: key.section)
            let rows = collection[key.section].rows
            let now = rows.placed(key.row)
            guard let before else {
                newOnly[section, default: []].append((rows.identity(of: key.row), now))
                continue
            }
            if before.section == section {
                named[section]?.rows.append(ListPatchChange.Named(old: before.placed, new: now))
            } else {
                crossings.append(Crossing(from: before.section, to: section, old: before.placed, new: now))
                named[before.section]?.rows.append(ListPatchChange.Named(old: before.placed, new: nil, isListed: false))
                named[section]?.rows.append(ListPatchChange.Named(old: nil, new: now, isListed: false))
            }
        }
        for case let before? in patched.gone { oldOnly[before.section, default: []].append(before) }
        // Within a section, a row that went and one of the same identity that came are the
        // same row (its section removed and added again, say), as the differ pairs them.
        for identity in Set(oldOnly.keys).union(newOnly.keys) {
            var came = Dictionary(grouping: newOnly[identity] ?? [], by: \.identity)
            for before in oldOnly[identity] ?? [] {
                if let match = came[before.identity], match.count == 1, (oldOnly[identity] ?? []).filter({ $0.identity == before.identity }).count == 1 {
                    named[identity]?.rows.append(ListPatchChange.Named(old: before.placed, new: match[0].row))
                    came[before.identity] = []
                } else {
                    named[identity]?.rows.append(ListPatchChange.Named(old: before.placed, new: nil))
                }
            }
            for row in came.values.joined() { named[identity]?.rows.append(ListPatchChange.Named(old: nil, new: row.row)) }
        }
        return (Array(named.values), crossings)
    }

    /// Writes named section `index`'s new text into `delta` (whose base is the old text):
    /// its header copied when unchanged, its rows as its plan says.
    private func write(new index: Int, into delta: inout TextDelta) {
        let (section, plan, collection) = (named[index], plans[index], collection)
        guard let new = section.new else { return }
        let now = collection[new.node]
        let base = section.old.map { (prefix: $0.prefix, suffix: $0.suffix, offset: $0.offset, rowsTextCount: $0.rowsTextCount) }
        Self.write(header: (now.prefix, now.suffix), over: base, into: &delta) { delta, rowsFrom in
            plan.writeNew(into: &delta, runsFrom: rowsFrom) { collection.texts[$0.location] }
        }
    }

    /// Writes named section `index`'s old text into `delta` (whose base is the new text).
    private func write(old index: Int, into delta: inout TextDelta) {
        let (section, plan, collection) = (named[index], plans[index], collection)
        guard let old = section.old else { return }
        let base = section.new.map { new in
            let now = collection[new.node]
            return (prefix: now.prefix, suffix: now.suffix, offset: collection.offset(of: new.node), rowsTextCount: now.rows.textCount)
        }
        Self.write(header: (old.prefix, old.suffix), over: base, into: &delta) { delta, rowsFrom in
            plan.writeOld(into: &delta, runsFrom: rowsFrom) { collection.texts[$0.location] }
        }
    }

    /// Writes a section of `header` into `delta`, its rows by `rows` (given where the rows'
    /// `[` stands in the base); each part of the header copied from `base`, the same
    /// section in the delta's base text (where it starts, its header and the length of its
    /// rows' text), when it is the same there.
    private static func write(
        header: (prefix: ArraySlice<UInt8>, suffix: ArraySlice<UInt8>),
        over base: (prefix: ArraySlice<UInt8>, suffix: ArraySlice<UInt8>, offset: Int, rowsTextCount: Int)?,
        into delta: inout TextDelta, rows: (inout TextDelta, Int) -> Void
    ) {
        if let base, base.prefix.elementsEqual(header.prefix) {
            delta.append(copying: base.offset..<base.offset + base.prefix.count)
        } else {
            delta.append(literal: header.prefix)
        }
        let rowsFrom = (base?.offset ?? 0) + (base?.prefix.count ?? 0)
        rows(&delta, rowsFrom)
        if let base, base.suffix.elementsEqual(header.suffix) {
            let suffixFrom = rowsFrom + base.rowsTextCount
            delta.append(copying: suffixFrom..<suffixFrom + base.suffix.count)
        } else {
            delta.append(literal: header.suffix)
        }
    }
}
