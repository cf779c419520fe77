/// A version of a feed as the memory store keeps it once it is no longer the latest: its
/// text as a change from the next version's (``TextDelta``), so that a version costs what
/// changed (docs/feeds.md §7.1); read back by composing the changes down from the latest,
/// which is kept whole.
struct StoredVersion: Sendable {
    let number: Int
    /// A store-wide sequence number: smaller is older, across feeds.
    let sequence: Int
    /// The text as a change from the next version's, encoded (``TextDelta/encoded``, a
    /// third of the delta's own size); `nil` while the version is the latest.
    var change: [UInt8]?
    /// The answers of the writes under an `Idempotency-Key` that made or found this version.
    var keptAnswers: [KeptAnswer] = []

    init(number: Int, sequence: Int) {
        self.number = number
        self.sequence = sequence
    }

    /// Bytes held: the change, the answers kept, and the record itself.
    var byteEstimate: Int {
        Self.recordBytes + (change?.capacity ?? 0) + keptAnswers.reduce(0) { $0 + 64 + $1.key.utf8.count + $1.body.count }
    }

    /// The bytes of a version's record without its change or answers.
    static let recordBytes = 64
}
