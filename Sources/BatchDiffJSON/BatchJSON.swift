import BatchDiff

/// Writing batches in their JSON format (docs/batch-format.md §2).
extension JSONOutput {
    /// Appends the members of `batch` (without braces): `"sections":…,"rows":…,"counts":…`.
    public mutating func batchMembers(_ batch: JSONBatch) {
        switch batch {
        case .list(let batch):
            key("rows")
            rowChanges(batch.rows) { $0.integer($1) }
            raw(",")
            key("counts")
            raw("{\"old\":")
            integer(batch.oldCount)
            raw(",\"new\":")
            integer(batch.newCount)
            raw("}")
        case .sectioned(let batch):
            key("sections")
            raw("{\"deleted\":")
            array(batch.sections.deleted) { $0.integer($1) }
            raw(",\"inserted\":")
            array(batch.sections.inserted) { $0.integer($1) }
            raw(",\"updated\":")
            array(batch.sections.updated) { $0.integer($1) }
            raw(",\"moved\":")
            array(batch.sections.moved) { $0.move($1) { $0.integer($1) } }
            raw("},")
            key("rows")
            rowChanges(batch.rows) { $0.indexPath($1) }
            raw(",")
            key("counts")
            raw("{\"old\":")
            array(batch.oldCounts) { $0.integer($1) }
            raw(",\"new\":")
            array(batch.newCounts) { $0.integer($1) }
            raw("}")
        }
    }

    /// Appends `batch` as a whole JSON object.
    public mutating func batch(_ batch: JSONBatch) {
        raw("{")
        batchMembers(batch)
        raw("}")
    }

    private mutating func rowChanges<Index>(_ rows: RowChanges<Index>, _ write: (inout JSONOutput, Index) -> Void) {
        raw("{\"deleted\":")
        array(rows.deleted, write)
        raw(",\"inserted\":")
        array(rows.inserted, write)
        raw(",\"reloaded\":")
        array(rows.reloaded, write)
        raw(",\"moved\":")
        array(rows.moved) { $0.move($1, write) }
        raw("}")
    }

    private mutating func move<Index>(_ move: Move<Index>, _ write: (inout JSONOutput, Index) -> Void) {
        raw("{\"from\":")
        write(&self, move.from)
        raw(",\"to\":")
        write(&self, move.to)
        raw("}")
    }

    private mutating func indexPath(_ path: RowPath) {
        raw("[")
        integer(path.section)
        raw(",")
        integer(path.row)
        raw("]")
    }
}
