import BatchDiff

/// Writing batches in their JSON format (docs/batch-format.md §2).
extension JSONOutput {
    /// Appends the members of `batch` to the object being written:
    /// `"sections":…` (sectioned batches only), `"rows":…`, `"counts":…`; with
    /// `changedMembers`, `rows` and `sections` end with theirs (docs/batch-format.md §6).
    public mutating func batchMembers(_ batch: JSONBatch, changedMembers: ChangedMembers? = nil) {
        switch batch {
        case .list(let batch):
            key("rows")
            rowChanges(batch.rows, changedMembers: changedMembers?.rows) { $0.integer($1) }
            counts(BatchCounts(.list(batch)))
        case .sectioned(let batch):
            key("sections")
            object { output in
                output.key("deleted")
                output.array(batch.sections.deleted) { $0.integer($1) }
                output.key("inserted")
                output.array(batch.sections.inserted) { $0.integer($1) }
                output.key("updated")
                output.array(batch.sections.updated) { $0.integer($1) }
                output.key("moved")
                output.array(batch.sections.moved) { $0.move($1) { $0.integer($1) } }
                if let changed = changedMembers?.sections { output.changedMembers(changed) }
            }
            key("rows")
            rowChanges(batch.rows, changedMembers: changedMembers?.rows) { $0.indexPath($1) }
            counts(BatchCounts(.sectioned(batch)))
        }
    }

    /// Appends `"reload":true` and the `counts` of `batch`: the answer of a batch past a
    /// client's `maxChanges` (docs/batch-format.md §6).
    public mutating func reloadMembers(_ batch: JSONBatch) {
        reloadMembers(BatchCounts(batch))
    }

    /// Appends `"reload":true` and `"counts":…` of a batch whose counts are `counts`.
    public mutating func reloadMembers(_ counts: BatchCounts) {
        key("reload")
        bool(true)
        self.counts(counts)
    }

    /// Appends `"steps":[…]` and `"counts":…`: `batch` as steps on the flat list an adapter
    /// shows (docs/batch-format.md §7). With `values`, each insert and change step carries
    /// the new elements it brings: `values(p)` writes the element at new flat position `p`.
    /// With `changedMembers`, each change step carries the changed members of each position
    /// it covers (Android's change payloads).
    public mutating func stepsMembers(
        _ batch: JSONBatch, values: ((inout JSONOutput, Int) throws -> Void)?, changedMembers: ChangedMembers? = nil
    ) throws {
        let steps = switch batch {
        case .list(let batch): try batch.steps()
        case .sectioned(let batch): try batch.steps()
        }
        let changedAt = try changedMembers.map { try Self.changedMembersByPosition($0, of: batch) }
        key("steps")
        try array(steps) { output, step in
            try output.object { output in
                switch step {
                case .remove(let at, let count): try output.step("remove", at: at, count: count, values: nil)
                case .insert(let at, let count): try output.step("insert", at: at, count: count, values: values)
                case .change(let at, let count):
                    try output.step("change", at: at, count: count, values: values)
                    if let changedAt { output.changedMembers((at..<(at + count)).map { changedAt[$0] ?? nil }) }
                case .move(let from, let to):
                    output.key("op")
                    output.string("move")
                    output.key("from")
                    output.integer(from)
                    output.key("to")
                    output.integer(to)
                }
            }
        }
        counts(BatchCounts(batch))
    }

    /// The changed members of `batch`'s content changes, by the new flat position each lands at.
    private static func changedMembersByPosition(_ changed: ChangedMembers, of batch: JSONBatch) throws -> [Int: [String]?] {
        let (rows, sections) = switch batch {
        case .list(let batch): (try batch.changePositions(), [Int]())
        case .sectioned(let batch): try batch.changePositions()
        }
        var byPosition: [Int: [String]?] = [:]
        for (position, names) in zip(rows + sections, changed.rows + changed.sections) { byPosition[position] = names }
        return byPosition
    }

    /// The members of a range step: `op`, `at`, `count`, and the values of its positions.
    private mutating func step(_ op: String, at: Int, count: Int, values: ((inout JSONOutput, Int) throws -> Void)?) throws {
        key("op")
        string(op)
        key("at")
        integer(at)
        key("count")
        integer(count)
        if let values {
            key("values")
            try array(at..<(at + count), values)
        }
    }

    /// Appends `"counts":…`: two integers for a list, two arrays for sections.
    private mutating func counts(_ counts: BatchCounts) {
        key("counts")
        object { output in
            output.key("old")
            output.counts(counts.old, sectioned: counts.isSectioned)
            output.key("new")
            output.counts(counts.new, sectioned: counts.isSectioned)
        }
    }

    /// A list's count (the one of `counts`), or each section's.
    private mutating func counts(_ counts: [Int], sectioned: Bool) {
        if sectioned {
            array(counts) { $0.integer($1) }
        } else {
            integer(counts.first ?? 0)
        }
    }

    /// Appends `"changedMembers":[…]`, each entry an array of names or `null`.
    private mutating func changedMembers(_ entries: [[String]?]) {
        key("changedMembers")
        array(entries) { output, names in
            if let names {
                output.array(names) { $0.string($1) }
            } else {
                output.null()
            }
        }
    }

    /// Appends `batch` as a whole JSON object, as `options` ask for it (a reload past
    /// `maxChanges`; the changed members when given).
    public mutating func batch(_ batch: JSONBatch, options: AnswerOptions = AnswerOptions(), changedMembers: ChangedMembers? = nil) throws {
        try object { try $0.batchMembers(batch, options: options, changedMembers: changedMembers) }
    }

    /// Appends the members of `batch` as `options` ask for it: ``reloadMembers(_:)`` past
    /// `maxChanges`, else ``batchMembers(_:changedMembers:)`` or, in the steps format,
    /// ``stepsMembers(_:values:)`` (without values). (A JSON Patch is no object's members:
    /// ``jsonPatch(_:from:to:)`` writes it.)
    public mutating func batchMembers(_ batch: JSONBatch, options: AnswerOptions, changedMembers: ChangedMembers?) throws {
        if options.reloads(batch) {
            reloadMembers(batch)
        } else if options.format == .steps {
            try stepsMembers(batch, values: nil, changedMembers: changedMembers)
        } else if options.format == .jsonPatch {
            throw BatchError("a JSON Patch is an array, not an object's members: jsonPatch(_:from:to:) writes it")
        } else {
            batchMembers(batch, changedMembers: changedMembers)
        }
    }

    private mutating func rowChanges<Index>(_ rows: RowChanges<Index>, changedMembers: [[String]?]?, _ write: (inout JSONOutput, Index) -> Void) {
        object { output in
            output.key("deleted")
            output.array(rows.deleted, write)
            output.key("inserted")
            output.array(rows.inserted, write)
            output.key("reloaded")
            output.array(rows.reloaded, write)
            output.key("moved")
            output.array(rows.moved) { $0.move($1, write) }
            if let changedMembers { output.changedMembers(changedMembers) }
        }
    }

    private mutating func move<Index>(_ move: Move<Index>, _ write: (inout JSONOutput, Index) -> Void) {
        object { output in
            output.key("from")
            write(&output, move.from)
            output.key("to")
            write(&output, move.to)
        }
    }

    private mutating func indexPath(_ path: RowPath) {
        pair(path.section, path.row)
    }
}

/// The counts of a batch's old and new collections (a list's one count, or each section's), all
/// a reload says of its batch, kept without the batch.
public struct BatchCounts: Sendable {
    let old: [Int]
    let new: [Int]
    let isSectioned: Bool

    /// The counts of `batch`.
    public init(_ batch: JSONBatch) {
        switch batch {
        case .list(let batch): (old, new, isSectioned) = ([batch.oldCount], [batch.newCount], false)
        case .sectioned(let batch): (old, new, isSectioned) = (batch.oldCounts, batch.newCounts, true)
        }
    }
}
