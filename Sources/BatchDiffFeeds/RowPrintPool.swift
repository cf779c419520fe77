import BatchDiffJSON

/// The fingerprints of one row (or section header), all a past version keeps of it.
struct RowPrint: Hashable, Sendable {
    var identity: Fingerprint
    var content: Fingerprint
}

/// Interns row fingerprints so that versions sharing rows share their storage: a past
/// version is an array of 4-byte indexes into the pool.
///
/// The index from print to position is an open-addressing table of 4-byte slots (the
/// fingerprints are already well mixed), a tenth of what a `Dictionary` would hold.
struct RowPrintPool: Sendable {
    private(set) var prints: [RowPrint] = []
    /// Position + 1 of a print in `prints`, or 0 for an empty slot; at most half full.
    private var slots = [UInt32](repeating: 0, count: 1024)

    mutating func intern(_ print: RowPrint) -> UInt32 {
        var slot = self.slot(for: print)
        if slots[slot] != 0 { return slots[slot] - 1 }
        if (prints.count + 1) * 2 > slots.count {
            grow()
            slot = self.slot(for: print)
        }
        prints.append(print)
        slots[slot] = UInt32(prints.count)
        return UInt32(prints.count - 1)
    }

    /// The slot holding `print`, or the empty slot where it belongs.
    private func slot(for print: RowPrint) -> Int {
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: print.identity.low ^ print.content.high) & mask
        while slots[slot] != 0 && prints[Int(slots[slot] - 1)] != print { slot = (slot + 1) & mask }
        return slot
    }

    private mutating func grow() {
        slots = [UInt32](repeating: 0, count: slots.count * 2)
        for (position, print) in prints.enumerated() { slots[slot(for: print)] = UInt32(position + 1) }
    }

    /// Bytes held, estimated.
    var byteEstimate: Int { prints.capacity * 32 + slots.count * 4 }

    /// The most ``byteEstimate`` can be for a pool of `count` prints built by `intern`: the
    /// prints' array holds at most twice its count (plus a page of rounding), and the slots
    /// stay fewer than four per print (or the first 1024).
    static func byteEstimateBound(count: Int) -> Int { (2 * count + 128) * 32 + max(1024, 4 * count) * 4 }

    /// Keeps only the prints `versions` use, renumbering the versions' rows.
    mutating func compact(_ versions: inout [StoredVersion]) {
        var fresh = RowPrintPool()
        for index in versions.indices {
            versions[index].rows = versions[index].rows.map { fresh.intern(prints[Int($0)]) }
        }
        self = fresh
    }
}
