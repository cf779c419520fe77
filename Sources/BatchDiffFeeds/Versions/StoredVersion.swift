/// A version of a feed as the memory store keeps it once it is no longer the latest: its
/// text as a change from the next version's (``TextDelta``), so that a version costs what
/// changed (docs/feeds.md §7.1), or now and then whole; read back by composing the changes
/// down from the nearest newer whole text (or the latest, which is kept whole).
struct StoredVersion: Sendable {
    let number: Int
    /// A store-wide sequence number: smaller is older, across feeds.
    let sequence: Int
    /// The text, once the version is no longer the latest.
    var text: KeptText?
    /// The answers of the writes under an `Idempotency-Key` that made or found this version.
    var keptAnswers: [KeptAnswer] = []
    /// The batch from the version before (``JSONBatch/stored``); empty when the write made
    /// none, and once this is the oldest version retained (a window is seen only from it).
    var batch: [UInt8]

    init(number: Int, sequence: Int, batch: [UInt8] = []) {
        self.number = number
        self.sequence = sequence
        self.batch = batch
    }

    /// Bytes held: the change, the batch, the answers kept, and the record itself.
    var byteEstimate: Int {
        Self.recordBytes + (text?.bytes.capacity ?? 0) + batch.capacity + keptAnswers.reduce(0) { $0 + 64 + $1.key.utf8.count + $1.body.count }
    }

    /// The bytes of a version's record without its change or answers.
    static let recordBytes = 64
}

/// How a past version's text is kept in memory.
enum KeptText: Sendable {
    /// Its change from the next version's text, encoded (``TextDelta/encoded``).
    case change([UInt8])
    /// Whole, gzip-compressed: where reading an older version stops composing changes.
    case whole([UInt8])

    var bytes: [UInt8] {
        switch self {
        case .change(let bytes), .whole(let bytes): bytes
        }
    }
}
