extension SectionedBatch {
    /// For each row of the collection this batch leads to (its sections' rows one after the
    /// other), the old row it is with its content unchanged, one that stays in place or
    /// moves, as an index into the old collection's rows one after the other; `nil` for a
    /// row that is inserted or reloaded, or in an inserted section. What a store needs to
    /// keep one version as its change from the other.
    package func unchangedRowOrigins() throws -> [Int?] {
        let placement = try Placement(self)
        var oldStarts: [Int] = []
        oldStarts.reserveCapacity(oldCounts.count)
        var oldTotal = 0
        for count in oldCounts {
            oldStarts.append(oldTotal)
            oldTotal += count
        }
        var reloaded = [Bool](filling: false, count: oldTotal)
        for path in rows.reloaded { reloaded[oldStarts[path.section] + path.row] = true }
        var origins: [Int?] = []
        origins.reserveCapacity(newCounts.reduce(0, +))
        for (section, sectionRows) in placement.rows.enumerated() {
            guard let sectionRows else {
                origins.append(contentsOf: repeatElement(nil, count: newCounts[section]))
                continue
            }
            for origin in sectionRows {
                switch origin {
                case .inserted: origins.append(nil)
                case .old(let path):
                    let row = oldStarts[path.section] + path.row
                    origins.append(reloaded[row] ? nil : row)
                }
            }
        }
        return origins
    }
}

extension ListBatch {
    /// For each row of the list this batch leads to, the old row it is with its content
    /// unchanged (``SectionedBatch/unchangedRowOrigins()``), or `nil`.
    package func unchangedRowOrigins() throws -> [Int?] {
        try sectioned.unchangedRowOrigins()
    }
}
