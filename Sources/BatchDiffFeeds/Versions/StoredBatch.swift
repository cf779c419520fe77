import BatchDiff
import BatchDiffJSON

/// A version's batch from the version before, as stores keep it beside its change
/// (docs/feeds.md §11): a window answer for a client some versions behind is seen through the
/// batches of the versions between (``ListBatchWindow/init(across:offset:limit:)``), never
/// from the whole collections. Its bytes are a format byte, the shape (0 a list, 1 sections),
/// the counts, then each list of operations as its length and its indices; numbers as LEB128
/// varints. In room proportional to the batch's operations (and a sectioned collection's
/// sections).
extension JSONBatch {
    /// The batch as bytes, for a store.
    package var stored: [UInt8] {
        var writer = StoredBatchWriter()
        switch self {
        case .list(let batch):
            writer.bytes.append(0)
            writer.number(batch.oldCount)
            writer.number(batch.newCount)
            writer.rows(batch.rows, writing: { $0.number($1) })
        case .sectioned(let batch):
            writer.bytes.append(1)
            writer.numbers(batch.oldCounts)
            writer.numbers(batch.newCounts)
            writer.numbers(batch.sections.deleted)
            writer.numbers(batch.sections.inserted)
            writer.numbers(batch.sections.updated)
            writer.moves(batch.sections.moved, writing: { $0.number($1) })
            writer.rows(batch.rows, writing: { $0.path($1) })
        }
        return writer.bytes.capacity > writer.bytes.count ? writer.bytes.withUnsafeBufferPointer { Array($0) } : writer.bytes
    }

    /// A batch read from its ``stored`` bytes, its indices checked against its counts;
    /// ``FeedError/internalFailure(_:)`` for bytes that are not one.
    package init(stored bytes: [UInt8]) throws(FeedError) {
        var reader = StoredBatchReader(bytes: bytes)
        guard try reader.reader.byte() == 1 else { throw .internalFailure("a version's kept batch of an unknown format") }
        switch try reader.reader.byte() {
        case 0:
            let (oldCount, newCount) = (try reader.number(), try reader.number())
            let rows = try reader.rows(old: { $0 < oldCount }, new: { $0 < newCount }, reading: StoredBatchReader.readNumber)
            self = .list(ListBatch(rows: rows, oldCount: oldCount, newCount: newCount))
        case 1:
            let (oldCounts, newCounts) = (try reader.numbers(), try reader.numbers())
            let (old, new) = ({ (section: Int) in oldCounts.indices.contains(section) }, { (section: Int) in newCounts.indices.contains(section) })
            let sections = SectionChanges(
                deleted: try reader.numbers(within: old), inserted: try reader.numbers(within: new), updated: try reader.numbers(within: new),
                moved: try reader.moves(old: old, new: new, reading: StoredBatchReader.readNumber)
            )
            let rows = try reader.rows(
                old: { old($0.section) && (0..<oldCounts[$0.section]).contains($0.row) },
                new: { new($0.section) && (0..<newCounts[$0.section]).contains($0.row) },
                reading: StoredBatchReader.readPath
            )
            self = .sectioned(SectionedBatch(sections: sections, rows: rows, oldCounts: oldCounts, newCounts: newCounts))
        default:
            throw .internalFailure("a version's kept batch of an unknown shape")
        }
        guard reader.reader.isAtEnd else { throw .internalFailure("a version's kept batch with bytes after its end") }
    }
}

extension JSONBatch {
    /// `batches`, those a store found kept with versions `since + 1` through `latest` (an
    /// empty one for a version that keeps none), when there is one for every version: what
    /// ``FeedStore/batches(of:after:through:)`` answers.
    package static func stored(_ batches: [[UInt8]], after since: Int, through latest: Int) -> [[UInt8]]? {
        batches.count == latest - since && !batches.contains(where: \.isEmpty) ? batches : nil
    }
}

/// Writes a batch's numbers and lists.
private struct StoredBatchWriter {
    var bytes: [UInt8] = [1]

    mutating func number(_ value: Int) { Varint.append(value, to: &bytes) }

    mutating func path(_ path: RowPath) {
        number(path.section)
        number(path.row)
    }

    mutating func numbers(_ values: [Int]) {
        number(values.count)
        for value in values { number(value) }
    }

    mutating func list<Index>(_ values: [Index], writing write: (inout Self, Index) -> Void) {
        number(values.count)
        for value in values { write(&self, value) }
    }

    mutating func moves<Index>(_ moves: [Move<Index>], writing write: (inout Self, Index) -> Void) {
        number(moves.count)
        for move in moves {
            write(&self, move.from)
            write(&self, move.to)
        }
    }

    mutating func rows<Index>(_ rows: RowChanges<Index>, writing write: (inout Self, Index) -> Void) {
        list(rows.deleted, writing: write)
        list(rows.inserted, writing: write)
        list(rows.reloaded, writing: write)
        moves(rows.moved, writing: write)
    }
}

/// Reads a batch's numbers and lists, each index checked against the side it names.
private struct StoredBatchReader {
    var reader: VarintReader<FeedError>

    init(bytes: [UInt8]) {
        reader = VarintReader(bytes: bytes) { .internalFailure("a version's kept batch \($0)") }
    }

    mutating func number() throws(FeedError) -> Int { try reader.varint() }

    /// A list's length: each element takes a byte at least, so a damaged one is refused
    /// before anything is allocated.
    private mutating func length() throws(FeedError) -> Int {
        let length = try number()
        guard length <= reader.bytes.count - reader.offset else { throw .internalFailure("a version's kept batch with a list longer than its bytes") }
        return length
    }

    mutating func numbers(within bounds: (Int) -> Bool = { _ in true }) throws(FeedError) -> [Int] {
        try list(within: bounds, reading: Self.readNumber)
    }

    static func readNumber(_ reader: inout Self) throws(FeedError) -> Int { try reader.number() }

    static func readPath(_ reader: inout Self) throws(FeedError) -> RowPath {
        RowPath(section: try reader.number(), row: try reader.number())
    }

    mutating func list<Index>(within bounds: (Index) -> Bool, reading read: (inout Self) throws(FeedError) -> Index) throws(FeedError) -> [Index] {
        var values: [Index] = []
        for _ in 0..<(try length()) {
            let value = try read(&self)
            guard bounds(value) else { throw .internalFailure("a version's kept batch naming \(value), outside its counts") }
            values.append(value)
        }
        return values
    }

    mutating func moves<Index>(
        old: (Index) -> Bool, new: (Index) -> Bool, reading read: (inout Self) throws(FeedError) -> Index
    ) throws(FeedError) -> [Move<Index>] {
        var moves: [Move<Index>] = []
        for _ in 0..<(try length()) {
            let (from, to) = (try read(&self), try read(&self))
            guard old(from), new(to) else { throw .internalFailure("a version's kept batch moving \(from) to \(to), outside its counts") }
            moves.append(Move(from: from, to: to))
        }
        return moves
    }

    mutating func rows<Index>(
        old: (Index) -> Bool, new: (Index) -> Bool, reading read: (inout Self) throws(FeedError) -> Index
    ) throws(FeedError) -> RowChanges<Index> {
        RowChanges(
            deleted: try list(within: old, reading: read), inserted: try list(within: new, reading: read),
            reloaded: try list(within: old, reading: read), moved: try moves(old: old, new: new, reading: read)
        )
    }
}
