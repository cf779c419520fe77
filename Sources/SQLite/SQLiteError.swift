/// A failed SQLite call: its result code and SQLite's message.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// The (extended) result code, e.g. 5 (`SQLITE_BUSY`).
    public var code: Int32
    public var message: String

    /// Whether the database is locked by another connection (`SQLITE_BUSY`).
    public var isBusy: Bool { code & 0xFF == 5 }

    public var description: String { "SQLite error \(code): \(message)" }
}
