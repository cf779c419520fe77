import BatchDiff

/// Writing batches in their JSON format (docs/batch-format.md §2).
extension JSONOutput {
    /// Appends the members of `batch` to the object being written:
    /// `"sections":…` (sectioned batches only), `"rows":…`, `"counts":…`.
    public mutating func batchMembers(_ batch: JSONBatch) {
        switch batch {
        case .list(let batch):
            key("rows")
            rowChanges(batch.rows) { $0.integer($1) }
            key("counts")
            object { output in
                output.key("old")
                output.integer(batch.oldCount)
                output.key("new")
                output.integer(batch.newCount)
            }
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
            }
            key("rows")
            rowChanges(batch.rows) { $0.indexPath($1) }
            key("counts")
            object { output in
                output.key("old")
                output.array(batch.oldCounts) { $0.integer($1) }
                output.key("new")
                output.array(batch.newCounts) { $0.integer($1) }
            }
        }
    }

    /// Appends `batch` as a whole JSON object.
    public mutating func batch(_ batch: JSONBatch) {
        object { $0.batchMembers(batch) }
    }

    private mutating func rowChanges<Index>(_ rows: RowChanges<Index>, _ write: (inout JSONOutput, Index) -> Void) {
        object { output in
            output.key("deleted")
            output.array(rows.deleted, write)
            output.key("inserted")
            output.array(rows.inserted, write)
            output.key("reloaded")
            output.array(rows.reloaded, write)
            output.key("moved")
            output.array(rows.moved) { $0.move($1, write) }
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
