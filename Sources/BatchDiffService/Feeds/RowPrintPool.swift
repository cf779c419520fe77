import BatchDiffJSON

/// The fingerprints of one row (or section header), all a past version keeps of it.
struct RowPrint: Hashable {
    var identity: Fingerprint
    var content: Fingerprint
}

/// Interns row fingerprints so that versions sharing rows share their storage: a past
/// version is an array of 4-byte indexes into the pool.
struct RowPrintPool {
    private(set) var prints: [RowPrint] = []
    private var indexes: [RowPrint: UInt32] = [:]

    mutating func intern(_ print: RowPrint) -> UInt32 {
        if let index = indexes[print] { return index }
        let index = UInt32(prints.count)
        prints.append(print)
        indexes[print] = index
        return index
    }

    /// Bytes held, estimated (array plus dictionary with its load).
    var byteEstimate: Int { prints.count * 32 + indexes.capacity * 40 }

    /// Keeps only the prints `versions` use, renumbering the versions' rows.
    mutating func compact(_ versions: inout [StoredVersion]) {
        var fresh = RowPrintPool()
        for index in versions.indices {
            versions[index].rows = versions[index].rows.map { fresh.intern(prints[Int($0)]) }
        }
        self = fresh
    }
}
