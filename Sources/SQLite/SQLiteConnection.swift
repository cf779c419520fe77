import CSQLite

/// One connection to an SQLite database file, used from one thread (or queue) at a time.
/// Every unsafe pointer of SQLite lives in this file and `SQLiteStatement.swift`.
public final class SQLiteConnection {
    let handle: OpaquePointer

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
        sqlite3_close_v2(handle)
    }

    /// Rows changed by the last statement run.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// Runs `sql`, one or more statements without parameters or results.
    public func execute(_ sql: String) throws(SQLiteError) {
        try check(sqlite3_exec(handle, sql, nil, nil, nil))
    }

    /// A prepared statement of `sql`.
    public func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil))
        guard let statement else { throw SQLiteError(code: SQLITE_MISUSE, message: "no statement in \(sql)") }
        return SQLiteStatement(handle: statement, connection: self)
    }

    /// Runs `body` in a transaction that takes the write lock at once (`BEGIN IMMEDIATE`):
    /// committed when it returns, rolled back when it throws.
    public func writeTransaction<Result>(_ body: () throws(SQLiteError) -> Result) throws(SQLiteError) -> Result {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    func check(_ code: Int32) throws(SQLiteError) {
        guard code == SQLITE_OK || code == SQLITE_ROW || code == SQLITE_DONE else {
            throw SQLiteError(code: code, message: String(cString: sqlite3_errmsg(handle)))
        }
    }
}
