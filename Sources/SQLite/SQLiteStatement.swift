import CSQLite

/// A prepared statement of a ``SQLiteConnection``, used on the connection's thread.
/// Parameters are numbered from 1, result columns from 0, as SQLite numbers them.
public final class SQLiteStatement {
    private let handle: OpaquePointer
    private let connection: SQLiteConnection

    init(handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Clears the previous run and binds `values` to the parameters, in order.
    public func bind(_ values: SQLiteValue...) throws(SQLiteError) {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case .integer(let integer): try connection.check(sqlite3_bind_int64(handle, index, Int64(integer)))
            case .text(let text): try connection.check(sqlite3_bind_text(handle, index, text, -1, transient))
            case .blob(let bytes):
                try connection.check(bytes.withUnsafeBytes { sqlite3_bind_blob64(handle, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), UInt64($0.count), transient) })
            case .null: try connection.check(sqlite3_bind_null(handle, index))
            }
        }
    }

    /// Runs the statement to its next row: `true` with a row to read, `false` when done.
    public func step() throws(SQLiteError) -> Bool {
        let code = sqlite3_step(handle)
        try connection.check(code)
        return code == SQLITE_ROW
    }

    /// Runs the statement to its end (a statement without results).
    public func run() throws(SQLiteError) {
        while try step() {}
    }

    public func integer(at column: Int32) -> Int { Int(sqlite3_column_int64(handle, column)) }

    public func text(at column: Int32) -> String {
        sqlite3_column_text(handle, column).map { String(cString: $0) } ?? ""
    }

    public func blob(at column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let bytes = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// SQLite copies what is bound at once (`SQLITE_TRANSIENT`, a C macro Swift cannot import).
    private var transient: sqlite3_destructor_type { unsafeBitCast(-1, to: sqlite3_destructor_type.self) }
}

/// A value bound to a statement's parameter.
public enum SQLiteValue {
    case integer(Int)
    case text(String)
    case blob([UInt8])
    case null
}
