import BatchDiff
import BatchDiffJSON

/// A version of a feed as kept once it is no longer the latest: its rows' fingerprints,
/// which are all a diff needs (the values a client gets come from the latest snapshot), and
/// its JSON text gzip-compressed, read again only for what the fingerprints cannot say (the
/// members of an item that changed, docs/batch-format.md §6). While the version is the
/// latest, its text is the latest snapshot's.
struct StoredVersion: Sendable {
    let number: Int
    /// A store-wide sequence number: smaller is older, across feeds.
    let sequence: Int
    /// The sections' header fingerprints; `nil` for a list.
    let headers: [RowPrint]?
    let rowCounts: [Int]
    /// Pool indexes of every row, sections one after the other.
    var rows: [UInt32]
    /// The text, gzip-compressed, once the version is no longer the latest.
    var compressedText: [UInt8]?
    /// The answers of the writes under an `Idempotency-Key` that made or found this version.
    var keptAnswers: [KeptAnswer] = []

    init(_ snapshot: Snapshot, sequence: Int, pool: inout RowPrintPool) {
        number = snapshot.version
        self.sequence = sequence
        let items: JSONItems
        switch snapshot.collection {
        case .list(let list):
            headers = nil
            rowCounts = [list.count]
            items = list
        case .sectioned(let sections):
            headers = sections.flat.headers.map { RowPrint(identity: $0.identity, content: $0.content) }
            rowCounts = sections.flat.rowCounts
            items = sections.flat.items
        }
        rows = items.map { pool.intern(RowPrint(identity: $0.identity, content: $0.content)) }
    }

    /// Bytes held: the fingerprints, and the compressed text once there is one.
    var byteEstimate: Int {
        Self.byteEstimate(rows: rows.count, sections: headers?.count) + (compressedText?.capacity ?? 0)
            + keptAnswers.reduce(0) { $0 + 64 + $1.key.utf8.count + $1.body.count }
    }

    /// The bytes a stored version of `rows` rows in `sections` sections (`nil`: a list) holds.
    static func byteEstimate(rows: Int, sections: Int?) -> Int { 96 + rows * 4 + (sections ?? 1) * 8 + (sections ?? 0) * 32 }

    /// The version as a collection the differ can read (no text behind it).
    func collection(_ pool: RowPrintPool) -> JSONCollection {
        let item = { (row: UInt32) -> JSONItem in
            let print = pool.prints[Int(row)]
            return JSONItem(identity: print.identity, content: print.content, span: 0..<0)
        }
        let items = JSONItems(rows.lazy.map(item))
        guard let headers else { return .list(items) }
        return .sectioned(JSONSections(
            headers: headers.map { JSONSectionHeader(identity: $0.identity, content: $0.content, span: 0..<0) }, items: items, rowCounts: rowCounts
        ))
    }
}
