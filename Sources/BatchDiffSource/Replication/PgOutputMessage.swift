/// A message of PostgreSQL's `pgoutput` plugin, protocol version 1 (the documentation's
/// "Logical Replication Message Formats"): what one XLogData frame of a logical
/// replication stream carries.
enum PgOutputMessage: Equatable, Sendable {
    /// A transaction begins: the position its commit ends at, and its id.
    case begin(finalPosition: UInt64, xid: UInt32)
    /// The transaction committed: where its commit record starts and where it ends (the
    /// position a client reports as flushed once the transaction is applied), and when.
    case commit(position: UInt64, endPosition: UInt64, commitTime: Int64)
    /// What a relation (table) is, sent before its first change in the stream and again
    /// when it changes.
    case relation(Relation)
    /// A row inserted.
    case insert(relation: UInt32, new: [TupleValue])
    /// A row updated. `old` holds the old key's columns (when a key column changed) or the
    /// whole old row (`REPLICA IDENTITY FULL`), else nothing.
    case update(relation: UInt32, old: [TupleValue]?, new: [TupleValue])
    /// A row deleted: its key's columns (or the whole row, `REPLICA IDENTITY FULL`).
    case delete(relation: UInt32, old: [TupleValue])
    /// Relations emptied.
    case truncate(relations: [UInt32])
    /// A message that changes no row (origin, type, a logical decoding message).
    case other(kind: UInt8)

    /// A relation's columns as the stream names them.
    struct Relation: Equatable, Sendable {
        var id: UInt32
        /// The schema (`pg_catalog` is sent as empty).
        var namespace: String
        var name: String
        var columns: [Column]
    }

    struct Column: Equatable, Sendable {
        /// Whether the column is part of the replica identity (the key).
        var isKey: Bool
        var name: String
        var typeOID: UInt32
    }

    /// One column's value in a row.
    enum TupleValue: Equatable, Sendable {
        case null
        /// A TOASTed value the change left as it was: the stream does not repeat it.
        case unchangedToast
        /// The value in its type's text form.
        case text([UInt8])
    }

    /// The message `bytes` hold (one XLogData frame's payload).
    init(decoding bytes: ArraySlice<UInt8>) throws(ReplicationDecodingError) {
        var reader = ByteReader(bytes)
        let kind = try reader.byte()
        switch kind {
        case UInt8(ascii: "B"):
            let finalPosition = try reader.uint64()
            _ = try reader.int64()  // the commit time, told again by the commit
            self = .begin(finalPosition: finalPosition, xid: try reader.uint32())
        case UInt8(ascii: "C"):
            _ = try reader.byte()  // flags, unused
            self = .commit(position: try reader.uint64(), endPosition: try reader.uint64(), commitTime: try reader.int64())
        case UInt8(ascii: "R"):
            self = .relation(try Self.relation(&reader))
        case UInt8(ascii: "I"):
            let relation = try reader.uint32()
            try Self.expect(&reader, "N", in: "an insert")
            self = .insert(relation: relation, new: try Self.tuple(&reader))
        case UInt8(ascii: "U"):
            let relation = try reader.uint32()
            var old: [TupleValue]?
            var marker = try reader.byte()
            if marker == UInt8(ascii: "K") || marker == UInt8(ascii: "O") {
                old = try Self.tuple(&reader)
                marker = try reader.byte()
            }
            guard marker == UInt8(ascii: "N") else { throw .unexpected("an update without its new row") }
            self = .update(relation: relation, old: old, new: try Self.tuple(&reader))
        case UInt8(ascii: "D"):
            let relation = try reader.uint32()
            let marker = try reader.byte()
            guard marker == UInt8(ascii: "K") || marker == UInt8(ascii: "O") else { throw .unexpected("a delete without its old row") }
            self = .delete(relation: relation, old: try Self.tuple(&reader))
        case UInt8(ascii: "T"):
            let count = try reader.uint32()
            _ = try reader.byte()  // options (cascade, restart identity): the rows go either way
            var relations: [UInt32] = []
            for _ in 0..<count { relations.append(try reader.uint32()) }
            self = .truncate(relations: relations)
        default:
            self = .other(kind: kind)
        }
    }

    private static func expect(_ reader: inout ByteReader, _ marker: Unicode.Scalar, in what: String) throws(ReplicationDecodingError) {
        guard try reader.byte() == UInt8(ascii: marker) else { throw .unexpected("\(what) without its row") }
    }

    private static func relation(_ reader: inout ByteReader) throws(ReplicationDecodingError) -> Relation {
        let id = try reader.uint32()
        let namespace = try reader.cString()
        let name = try reader.cString()
        _ = try reader.byte()  // the replica identity setting
        let count = try reader.uint16()
        var columns: [Column] = []
        for _ in 0..<count {
            let flags = try reader.byte()
            let name = try reader.cString()
            let typeOID = try reader.uint32()
            _ = try reader.int32()  // the type modifier
            columns.append(Column(isKey: flags & 1 != 0, name: name, typeOID: typeOID))
        }
        return Relation(id: id, namespace: namespace.isEmpty ? "pg_catalog" : namespace, name: name, columns: columns)
    }

    private static func tuple(_ reader: inout ByteReader) throws(ReplicationDecodingError) -> [TupleValue] {
        let count = try reader.uint16()
        var values: [TupleValue] = []
        values.reserveCapacity(Int(count))
        for _ in 0..<count {
            switch try reader.byte() {
            case UInt8(ascii: "n"): values.append(.null)
            case UInt8(ascii: "u"): values.append(.unchangedToast)
            case UInt8(ascii: "t"): values.append(.text(Array(try reader.bytes(Int(try reader.int32())))))
            case let other: throw .unexpected("a column value of kind \(other) (only text is asked for)")
            }
        }
        return values
    }
}
