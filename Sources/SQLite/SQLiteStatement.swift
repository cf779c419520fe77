import CSQLite

/// A prepared statement of a ``SQLiteConnection``, used on the connection's thread.
/// Parameters are numbered from 1, result columns from 0, as SQLite numbers them.
public final class SQLiteStatement {
    private let handle: OpaquePointer

    init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Clears the previous run and binds `values` to the parameters, in order.
    public func bind(_ values: SQLiteValue...) throws(SQLiteError) {
        try bind(values)
    }

    /// Clears the previous run and binds `values` to the parameters, in order.
    public func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        reset()
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case .integer(let integer): try check(sqlite3_bind_int64(handle, index, Int64(integer)))
            case .text(let text): try check(sqlite3_bind_text(handle, index, text, -1, transient))
            case .blob(let bytes):
                try check(bytes.withUnsafeBytes { sqlite3_bind_blob64(handle, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), UInt64($0.count), transient) })
            case .null: try check(sqlite3_bind_null(handle, index))
            }
        }
    }

    /// Ends the current run (its read of the database with it).
    func reset() {
        sqlite3_reset(handle)
    }

    /// Runs the statement to its next row: `true` with a row to read, `false` when done.
    public func step() throws(SQLiteError) -> Bool {
        let code = sqlite3_step(handle)
        try check(code)
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

    /// The text at `column`, or `nil` when it is NULL.
    public func optionalText(at column: Int32) -> String? {
        sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : text(at: column)
    }

    public func blob(at column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let bytes = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// Errors of the statement's connection (which SQLite keeps open, a zombie, while a
    /// statement of it is not finalized).
    private func check(_ code: Int32) throws(SQLiteError) {
        try SQLiteError.check(code, of: sqlite3_db_handle(handle))
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
