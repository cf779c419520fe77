/// The rows a statement returned, copied out of libpq, each value in PostgreSQL's binary
/// format or its text form, as the statement asked (columns numbered from 0).
public struct PostgresRows: Sendable {
    /// How a statement's values come back.
    public enum Format: Sendable {
        /// Each type's binary format (``integer(_:_:)`` reads integers so).
        case binary
        /// Each type's text form, as `psql` shows it.
        case text
    }

    /// Each row's values; `nil` is SQL NULL.
    public let rows: [[[UInt8]?]]
    /// The type (`pg_type` oid) of each column.
    public let types: [UInt32]

    public var count: Int { rows.count }
    public var isEmpty: Bool { rows.isEmpty }

    /// Whether the value at `row`, `column` is NULL.
    public func isNull(_ row: Int, _ column: Int) -> Bool { rows[row][column] == nil }

    /// A `bigint`, `integer` or `smallint` value (big-endian, 8, 4 or 2 bytes).
    public func integer(_ row: Int, _ column: Int) -> Int {
        guard let bytes = rows[row][column], !bytes.isEmpty else { return 0 }
        let unsigned = bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let shift = UInt64(64 - 8 * bytes.count)
        return Int(Int64(bitPattern: unsigned << shift) >> Int64(shift))  // sign-extended
    }

    /// A `text` value.
    public func text(_ row: Int, _ column: Int) -> String {
        String(decoding: rows[row][column] ?? [], as: UTF8.self)
    }

    /// A `bytea` value.
    public func bytes(_ row: Int, _ column: Int) -> [UInt8] { rows[row][column] ?? [] }
}

/// A statement's parameter; the statement casts a parameter whose type PostgreSQL cannot
/// infer (`$1::text`).
public enum PostgresValue: Sendable {
    case text(String)
    case integer(Int)
    case bytes([UInt8])
}

/// A notification of a channel the connection listens on (`LISTEN`, `NOTIFY`).
public struct PostgresNotification: Sendable, Equatable {
    public var channel: String
    public var payload: String
}
