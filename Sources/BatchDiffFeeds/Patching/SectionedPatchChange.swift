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
enum SectionedPatchChange {
    /// A named section: where it stood and what it was, where it stands and its node now.
    private struct Named {
        let identity: Fingerprint
        let old: PatchedSections.SectionBefore?
        let new: (node: Int32, placed: RowOrder.PlacedRow)?
        /// Its rows, as a list's (each with its section's rows only).
        var rows: [ListPatchChange.Named] = []
        var plan: ListPatchChange.Plan?

        /// Whether its rows changed: a row came or went, moved or changed.
        var changesInside: Bool {
            rows.contains { $0.old == nil || $0.new == nil || $0.old!.position != $0.new!.position || $0.isChanged }
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

    static func change(of patched: PatchedSections) throws(FeedError) -> PatchChange {
        let collection = patched.rows
        var (named, crossings) = namedSections(of: patched)
        for index in named.indices {
            let order = named[index].new.map { collection[$0.node].rows } ?? RowOrder(items: [JSONItem]())
            named[index].plan = try ListPatchChange.Plan(named[index].rows, order: order, oldCount: named[index].old?.rowCount ?? 0)
        }
        let byOld = named.indices.filter { named[$0].old != nil }.sorted { named[$0].old!.placed.position < named[$1].old!.placed.position }
        let byNew = named.indices.filter { named[$0].new != nil }.sorted { named[$0].new!.placed.position < named[$1].new!.placed.position }
        let runs = try UnnamedRuns(
            old: byOld.map { UnnamedRuns.Place(position: named[$0].old!.placed.position, length: named[$0].old!.placed.length) },
            new: byNew.map { UnnamedRuns.Place(position: named[$0].new!.placed.position, length: named[$0].new!.placed.length) },
            order: collection.order, oldCount: patched.oldSectionCount
        )

        // Sections: what stays, moves, is deleted and inserted, and whose header is updated.
        let staying = UnnamedRuns.staying(runs.inNewOrder) { element in
            switch element {
            case .run(let index): return (runs.runs[index].oldStart, 2 * runs.runs[index].count)
            case .named(let index):
                let section = named[byNew[index]]
                return section.old.map { ($0.placed.position, section.changesInside ? 3 : 2) }
            }
        }
        var sections = SectionChanges()
        var stays = Set<Fingerprint>()
        for (element, kept) in zip(runs.inNewOrder, staying) {
            switch element {
            case .run(let index):
                let run = runs.runs[index]
                guard !kept else { continue }
                for section in 0..<run.count { sections.moved.append(Move(from: run.oldStart + section, to: run.newStart + section)) }
            case .named(let index):
                let section = named[byNew[index]]
                guard let old = section.old, let new = section.new else { continue }
                let (from, to) = (old.placed.position, new.placed.position)
                if kept {
                    stays.insert(section.identity)
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

        // Rows: those of staying sections as each one's plan says, and those between them.
        let sectionsByIdentity = Dictionary(uniqueKeysWithValues: named.map { ($0.identity, $0) })
        var rows = RowChanges<RowPath>()
        var inserted: [(path: RowPath, row: RowOrder.PlacedRow)] = []
        var reloaded: [(path: RowPath, row: RowOrder.PlacedRow)] = []
        for section in named where stays.contains(section.identity) {
            let (from, to) = (section.old!.placed.position, section.new!.placed.position)
            let plan = section.plan!
            rows.deleted += plan.rows.deleted.map { RowPath(section: from, row: $0) }
            rows.moved += plan.rows.moved.map { Move(from: RowPath(section: from, row: $0.from), to: RowPath(section: to, row: $0.to)) }
            inserted += plan.inserted.map { (RowPath(section: to, row: $0.position), $0) }
            reloaded += zip(plan.rows.reloaded, plan.reloaded).map { (RowPath(section: from, row: $0.0), $0.1) }
        }
        for crossing in crossings {
            let (from, to) = (sectionsByIdentity[crossing.from]!, sectionsByIdentity[crossing.to]!)
            let oldPath = stays.contains(from.identity) ? RowPath(section: from.old!.placed.position, row: crossing.old.position) : nil
            let newPath = stays.contains(to.identity) ? RowPath(section: to.new!.placed.position, row: crossing.new.position) : nil
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
        for list in [\SectionChanges.deleted, \.inserted, \.updated] { sections[keyPath: list].sort() }
        sections.moved.sort { $0.from < $1.from }

        let texts = collection.texts
        var values = ValueTexts()
        values.insertedRows = inserted.map { texts[$0.row.location] }
        values.reloadedRows = reloaded.map { texts[$0.row.location] }
        let newNodes = collection.order.rowsInOrder()
        values.insertedSections = sections.inserted.map { collection.text(of: newNodes[$0])[...] }
        values.updatedSections = sections.updated.map { collection.headerText(of: newNodes[$0])[...] }

        // The counts every batch carries: rows per section, old and new.
        let newCounts = newNodes.map { collection[$0].rows.count }
        var oldCounts: [Int] = []
        oldCounts.reserveCapacity(patched.oldSectionCount)
        for element in runs.inOldOrder {
            switch element {
            case .run(let index): oldCounts += newCounts[runs.runs[index].newStart..<runs.runs[index].newStart + runs.runs[index].count]
            case .named(let index): oldCounts.append(named[byOld[index]].old!.rowCount)
            }
        }

        let outer = (prefix: collection.outer.prefix.count, suffix: collection.outer.suffix.count)
        var forward = TextDelta(over: patched.oldTextCount)
        forward.append(copying: 0..<outer.prefix)
        UnnamedRuns.write(runs.inNewOrder, into: &forward, run: { runs.runs[$0].oldText.shifted(by: outer.prefix) }) { index, delta in
            let section = named[byNew[index]]
            write(new: section, of: collection, into: &delta, oldOffset: section.old?.offset ?? 0)
        }
        forward.append(copying: patched.oldTextCount - outer.suffix..<patched.oldTextCount)
        var backward = TextDelta(over: collection.textCount)
        backward.append(copying: 0..<outer.prefix)
        UnnamedRuns.write(runs.inOldOrder, into: &backward, run: { runs.runs[$0].newText.shifted(by: outer.prefix) }) { index, delta in
            write(old: named[byOld[index]], of: collection, into: &delta)
        }
        backward.append(copying: collection.textCount - outer.suffix..<collection.textCount)
        forward.trimCapacity()
        backward.trimCapacity()
        let batch = SectionedBatch(sections: sections, rows: rows, oldCounts: oldCounts, newCounts: newCounts)
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
                named[section]!.rows.append(ListPatchChange.Named(old: before.placed, new: now))
            } else {
                crossings.append(Crossing(from: before.section, to: section, old: before.placed, new: now))
                named[before.section]!.rows.append(ListPatchChange.Named(old: before.placed, new: nil, isListed: false))
                named[section]!.rows.append(ListPatchChange.Named(old: nil, new: now, isListed: false))
            }
        }
        for case let before? in patched.gone { oldOnly[before.section, default: []].append(before) }
        // Within a section, a row that went and one of the same identity that came are the
        // same row (its section removed and added again, say), as the differ pairs them.
        for identity in Set(oldOnly.keys).union(newOnly.keys) {
            var came = Dictionary(grouping: newOnly[identity] ?? [], by: \.identity)
            for before in oldOnly[identity] ?? [] {
                if let match = came[before.identity], match.count == 1, oldOnly[identity]!.filter({ $0.identity == before.identity }).count == 1 {
                    named[identity]!.rows.append(ListPatchChange.Named(old: before.placed, new: match[0].row))
                    came[before.identity] = []
                } else {
                    named[identity]!.rows.append(ListPatchChange.Named(old: before.placed, new: nil))
                }
            }
            for row in came.values.joined() { named[identity]!.rows.append(ListPatchChange.Named(old: nil, new: row.row)) }
        }
        return (Array(named.values), crossings)
    }

    /// Writes section `section`'s new text into `delta` (whose base is the old text, where
    /// the section stood at `oldOffset`): its header copied when unchanged, its rows as its
    /// plan says.
    private static func write(new section: Named, of collection: SectionedRows, into delta: inout TextDelta, oldOffset: Int) {
        let now = collection[section.new!.node]
        let base = section.old.map { (prefix: $0.prefix, suffix: $0.suffix, offset: oldOffset, rowsTextCount: $0.rowsTextCount) }
        write(header: (now.prefix, now.suffix), over: base, into: &delta) { delta, rowsFrom in
            section.plan!.writeNew(into: &delta, runsFrom: rowsFrom) { collection.texts[$0.location] }
        }
    }

    /// Writes section `section`'s old text into `delta` (whose base is the new text).
    private static func write(old section: Named, of collection: SectionedRows, into delta: inout TextDelta) {
        let old = section.old!
        let base = section.new.map { new in
            let now = collection[new.node]
            return (prefix: now.prefix, suffix: now.suffix, offset: collection.offset(of: new.node), rowsTextCount: now.rows.textCount)
        }
        write(header: (old.prefix, old.suffix), over: base, into: &delta) { delta, rowsFrom in
            section.plan!.writeOld(into: &delta, runsFrom: rowsFrom) { collection.texts[$0.location] }
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
