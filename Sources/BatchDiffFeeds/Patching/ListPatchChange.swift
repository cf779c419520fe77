import BatchDiff
import BatchDiffJSON

/// What a patch did to a list (``PatchedList``), found from the rows it named alone
/// (``UnnamedRuns``): its cost is the rows named times a logarithm, whatever the list's
/// length. Among the runs of rows the patch did not name and the named rows that stay, those
/// whose old positions rise in the new order with the most rows stay in place (a longest
/// increasing subsequence, each run weighing its rows; among equally heavy ones, the one
/// keeping the most changed rows); every other one moves, a changed row being deleted and
/// inserted (docs/batch-format.md §5). So the batch has no more operations than the differ's.
enum ListPatchChange {
    /// A named row: before the patch (`nil`: the patch added it), after (`nil`: removed).
    /// A row that went to another list or came from one (another section) is not
    /// `listed`: its list's batch leaves it to whoever pairs the two lists' rows.
    struct Named {
        let old: RowOrder.PlacedRow?
        let new: RowOrder.PlacedRow?
        var isListed = true

        var isChanged: Bool { old != nil && new != nil && old!.content != new!.content }
    }

    static func change(of list: PatchedList) throws(FeedError) -> PatchChange {
        let order = list.order
        var named = list.before.map { identity, old in Named(old: old, new: side(of: identity, in: order)) }
        for identity in list.added {
            if let new = side(of: identity, in: order) { named.append(Named(old: nil, new: new)) }
        }
        let plan = try Plan(named, order: order, oldCount: list.oldCount)
        var values = ValueTexts()
        let texts = list.rows.texts
        values.insertedRows = plan.inserted.map { texts[$0.location] }
        values.reloadedRows = plan.reloaded.map { texts[$0.location] }
        values.reloadedRowsBefore = plan.reloadedBefore.map { texts[$0.location] }
        var forward = TextDelta(over: list.oldTextCount)
        plan.writeNew(into: &forward, runsFrom: 0) { texts[$0.location] }
        var backward = TextDelta(over: order.textCount)
        plan.writeOld(into: &backward, runsFrom: 0) { texts[$0.location] }
        forward.trimCapacity()
        backward.trimCapacity()
        return PatchChange(
            batch: .list(ListBatch(rows: plan.rows, oldCount: list.oldCount, newCount: order.count)), values: values,
            forward: forward, backward: backward, textCount: order.textCount,
            leavesTextAsItWas: plan.rows.operationCount == 0 && keepTheirTexts(named, in: texts)
        )
    }

    /// Whether every row of `named` is still there with the very text it had.
    static func keepTheirTexts(_ named: [Named], in texts: RowTexts) -> Bool {
        named.allSatisfy { row in
            guard let old = row.old, let new = row.new else { return false }
            return texts[old.location].elementsEqual(texts[new.location])
        }
    }

    private static func side(of identity: Fingerprint, in order: RowOrder) -> RowOrder.PlacedRow? {
        guard case .row(let row) = order.row(identity) else { return nil }
        return order.placed(row)
    }

    /// The row changes of one list from its named rows: what stays, moves, is deleted,
    /// inserted or reloaded, and how its text is written from the other version's.
    struct Plan {
        private let named: [Named]
        /// The named rows on each side, sorted by position (indexes into `named`).
        private let byOld: [Int]
        private let byNew: [Int]
        private let runs: UnnamedRuns
        private(set) var rows = RowChanges<Int>()
        /// The new side of each inserted row and of each reloaded one, in the batch's order.
        private(set) var inserted: [RowOrder.PlacedRow] = []
        private(set) var reloaded: [RowOrder.PlacedRow] = []
        /// The old side of each reloaded row, in the batch's order.
        private(set) var reloadedBefore: [RowOrder.PlacedRow] = []

        /// The plan of a list of `oldCount` rows that is now `order`, whose named rows are
        /// `named`.
        init(_ named: [Named], order: RowOrder, oldCount: Int) throws(FeedError) {
            self.named = named
            byOld = named.indices.filter { named[$0].old != nil }.sorted { named[$0].old!.position < named[$1].old!.position }
            byNew = named.indices.filter { named[$0].new != nil }.sorted { named[$0].new!.position < named[$1].new!.position }
            let runs = try UnnamedRuns(
                old: byOld.map { UnnamedRuns.Place(position: named[$0].old!.position, length: named[$0].old!.length) },
                new: byNew.map { UnnamedRuns.Place(position: named[$0].new!.position, length: named[$0].new!.length) },
                order: order, oldCount: oldCount
            )
            self.runs = runs
            let (byNew, named) = (byNew, named)
            // Each weighs the operations its staying saves: a run of k rows, k moves; a named
            // row, one (a move, or a delete and insert for a reload). Of equally heavy ones,
            // the one keeping more changed rows (a reload, not a delete and insert): a bonus
            // of one on a scale that all the bonuses together stay below. (A changed row
            // weighed 1.5 moves: two of them outweighed three moved rows that cost one less.)
            let scale = named.count + 1
            let staying = UnnamedRuns.staying(runs.inNewOrder) { element in
                switch element {
                case .run(let index): return (runs.runs[index].oldStart, runs.runs[index].count * scale)
                case .named(let index):
                    let row = named[byNew[index]]
                    return row.old.map { ($0.position, scale + (row.isChanged ? 1 : 0)) }
                }
            }
            var inserted: [RowOrder.PlacedRow] = []
            var reloaded: [(old: RowOrder.PlacedRow, new: RowOrder.PlacedRow)] = []
            for (element, stays) in zip(runs.inNewOrder, staying) {
                switch element {
                case .run(let index):
                    let run = runs.runs[index]
                    guard !stays else { continue }
                    for row in 0..<run.count { rows.moved.append(Move(from: run.oldStart + row, to: run.newStart + row)) }
                case .named(let index):
                    let row = named[byNew[index]]
                    guard let old = row.old, let new = row.new else { continue }
                    if !row.isChanged {
                        if !stays { rows.moved.append(Move(from: old.position, to: new.position)) }
                    } else if stays {
                        reloaded.append((old, new))
                    } else {
                        rows.deleted.append(old.position)
                        inserted.append(new)
                    }
                }
            }
            for row in named where row.isListed {
                if let old = row.old, row.new == nil { rows.deleted.append(old.position) }
                if let new = row.new, row.old == nil { inserted.append(new) }
            }
            inserted.sort { $0.position < $1.position }
            reloaded.sort { $0.old.position < $1.old.position }
            rows.reloaded = reloaded.map(\.old.position)
            rows.deleted.sort()
            rows.inserted = inserted.map(\.position)
            rows.moved.sort { $0.from < $1.from }
            self.inserted = inserted
            self.reloaded = reloaded.map(\.new)
            self.reloadedBefore = reloaded.map(\.old)
        }

        /// Writes the list's new text into `delta`, whose base is the old text, the list's
        /// `[` standing at `runsFrom` in it; each named row's text as `text` reads it.
        func writeNew(into delta: inout TextDelta, runsFrom offset: Int, text: (RowOrder.PlacedRow) -> ArraySlice<UInt8>) {
            UnnamedRuns.write(runs.inNewOrder, into: &delta, run: { runs.runs[$0].oldText.shifted(by: offset) }) { index, delta in
                delta.append(literal: text(named[byNew[index]].new!))
            }
        }

        /// Writes the list's old text into `delta`, whose base is the new text, the list's
        /// `[` standing at `runsFrom` in it; each named row's old text as `text` reads it.
        func writeOld(into delta: inout TextDelta, runsFrom offset: Int, text: (RowOrder.PlacedRow) -> ArraySlice<UInt8>) {
            UnnamedRuns.write(runs.inOldOrder, into: &delta, run: { runs.runs[$0].newText.shifted(by: offset) }) { index, delta in
                delta.append(literal: text(named[byOld[index]].old!))
            }
        }
    }
}

extension Range<Int> {
    func shifted(by offset: Int) -> Range<Int> { lowerBound + offset..<upperBound + offset }
}
