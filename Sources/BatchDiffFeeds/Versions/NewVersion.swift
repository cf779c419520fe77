import BatchDiffJSON

/// A version a write stores: the snapshot, what its answer under an `Idempotency-Key` was,
/// and, when the write knows it, how it differs from the version before, so that a store
/// can keep either as its change from the other (``TextDelta``) instead of whole.
package struct NewVersion: Sendable {
    /// The new version, numbered.
    package let snapshot: Snapshot
    /// The version it follows, as the write read it (`nil` for a feed's first version, or
    /// when the write does not know it).
    let base: Snapshot?
    /// For each row of `snapshot`, the row of `base` it is unchanged from, or `nil`
    /// (``SectionedBatch/unchangedRowOrigins()``).
    let origins: [Int?]
    /// The changes of text from `base` to `snapshot` and back, when the write made them
    /// itself (a patch): then neither text is read.
    let changes: (forward: TextDelta, backward: TextDelta)?
    /// The write's answer, kept under its `Idempotency-Key` with the version.
    package let keptAnswer: KeptAnswer?
    /// The batch from the version before, when the write made it, as a store keeps it
    /// (``JSONBatch/stored``); empty when it did not.
    package let storedBatch: [UInt8]

    /// `snapshot`, with nothing known of the version before it.
    package init(_ snapshot: Snapshot, keeping answer: KeptAnswer? = nil) {
        self.init(snapshot, base: nil, origins: [], batch: [], keeping: answer)
    }

    /// `snapshot`, written whole over `base` (when the write read it), its rows unchanged
    /// from `origins`, `batch` the stored batch from it.
    init(_ snapshot: Snapshot, base: Snapshot?, origins: [Int?], batch: [UInt8], keeping answer: KeptAnswer?) {
        self.snapshot = snapshot
        self.base = base
        self.origins = origins
        changes = nil
        keptAnswer = answer
        storedBatch = batch
    }

    /// `snapshot`, made from `base` by a patch whose changes of text, both ways, are
    /// `changes`, `batch` the stored batch from it.
    init(_ snapshot: Snapshot, base: Snapshot, changes: (forward: TextDelta, backward: TextDelta), batch: [UInt8], keeping answer: KeptAnswer?) {
        self.snapshot = snapshot
        self.base = base
        origins = []
        self.changes = changes
        keptAnswer = answer
        storedBatch = batch
    }

    /// The new version's text as a change from the text of the version before, when the
    /// write knows that version.
    package func forwardDelta() -> TextDelta? {
        if let changes { return changes.forward }
        guard let base, origins.count == snapshot.collection.rowCount else { return nil }
        return TextDelta(target: (snapshot.bytes, snapshot.collection.rowSpans), base: (base.bytes, base.collection.rowSpans), sources: origins)
    }

    /// The text of the version before (`base`, which must be that version's) as a change
    /// from the new version's text.
    package func backwardDelta(to base: Snapshot) -> TextDelta {
        if let changes, self.base?.version == base.version { return changes.backward }
        guard let known = self.base, known.version == base.version, origins.count == snapshot.collection.rowCount else {
            return TextDelta(target: (base.bytes, []), base: (snapshot.bytes, []), sources: [])
        }
        var sources = [Int?](repeating: nil, count: known.collection.rowCount)
        for (row, origin) in origins.enumerated() {
            if let origin { sources[origin] = row }
        }
        return TextDelta(target: (known.bytes, known.collection.rowSpans), base: (snapshot.bytes, snapshot.collection.rowSpans), sources: sources)
    }
}

extension JSONCollection {
    /// The rows, sections' rows one after the other.
    var rows: JSONItems {
        switch self {
        case .list(let items): items
        case .sectioned(let sections): sections.flat.items
        }
    }

    var rowCount: Int { rows.count }

    /// Where each row's text stands.
    var rowSpans: [Range<Int>] { rows.map(\.span) }
}

extension JSONBatch {
    /// For each row of the collection the batch leads to, the row of the old one it is
    /// unchanged from (``SectionedBatch/unchangedRowOrigins()``).
    func unchangedRowOrigins() throws -> [Int?] {
        switch self {
        case .list(let batch): try batch.unchangedRowOrigins()
        case .sectioned(let batch): try batch.unchangedRowOrigins()
        }
    }
}
