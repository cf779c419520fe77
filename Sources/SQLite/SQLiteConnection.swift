import CSQLite

/// One connection to an SQLite database file, used from one thread (or queue) at a time.
/// Every unsafe pointer of SQLite lives in this file and `SQLiteStatement.swift`.
public final class SQLiteConnection {
    let handle: OpaquePointer
    /// Statements prepared once and kept, by their SQL (``cachedStatement(_:)``).
    private var cachedStatements: [String: SQLiteStatement] = [:]

    /// Opens (creating if needed) the database at `path`, without SQLite's own mutexes:
    /// the owner serializes its use.
    public init(path: String) throws(SQLiteError) {
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)  // a handle is returned even when opening fails
            throw SQLiteError(code: code, message: message)
        }
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
    }

    deinit {
        cachedStatements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Rows changed by the last statement run.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// Runs `sql`, one or more statements without parameters or results.
    public func execute(_ sql: String) throws(SQLiteError) {
        try check(sqlite3_exec(handle, sql, nil, nil, nil))
    }

    /// A prepared statement of `sql`, finalized when it is released.
    public func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil))
        guard let statement else { throw SQLiteError(code: SQLITE_MISUSE, message: "no statement in \(sql)") }
        return SQLiteStatement(handle: statement)
    }

    /// The statement of `sql`, prepared on its first use and kept for the next ones (GRDB's
    /// `cachedStatement`): SQL is compiled once per connection, not once per call. Binding
    /// it starts a new run; ``resetStatements()`` ends the runs left open.
    public func cachedStatement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = cachedStatements[sql] { return cached }
        let prepared = try prepare(sql)
        cachedStatements[sql] = prepared
        return prepared
    }

    /// Ends the runs of the kept statements (a statement left before its last row holds a
    /// read transaction open, and its table).
    public func resetStatements() {
        for statement in cachedStatements.values { statement.reset() }
    }

    /// Runs the kept statement of `sql` with `values` bound, to its end; the rows it changed.
    @discardableResult
    public func run(_ sql: String, _ values: SQLiteValue...) throws(SQLiteError) -> Int {
        let statement = try cachedStatement(sql)
        try statement.bind(values)
        try statement.run()
        return changes
    }

    /// The one integer `sql` answers, by a statement finalized when this returns (a table is
    /// not dropped while a statement is open on the connection).
    public func integer(_ sql: String) throws(SQLiteError) -> Int {
        let statement = try prepare(sql)
        _ = try statement.step()
        return statement.integer(at: 0)
    }

    /// Runs `body` in a transaction that takes the write lock at once (`BEGIN IMMEDIATE`):
    /// committed when it returns, rolled back when it throws; the kept statements' runs end
    /// with it.
    public func writeTransaction<Result>(_ body: () throws(SQLiteError) -> Result) throws(SQLiteError) -> Result {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            resetStatements()
            try execute("COMMIT")
            return result
        } catch {
            resetStatements()
            try? execute("ROLLBACK")
            throw error
        }
    }

    func check(_ code: Int32) throws(SQLiteError) {
        try SQLiteError.check(code, of: handle)
    }
}

extension SQLiteError {
    /// Throws SQLite's message for `code` on `database` unless it tells success.
    static func check(_ code: Int32, of database: OpaquePointer?) throws(SQLiteError) {
        guard code == SQLITE_OK || code == SQLITE_ROW || code == SQLITE_DONE else {
            throw SQLiteError(code: code, message: database.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory")
        }
    }
}
