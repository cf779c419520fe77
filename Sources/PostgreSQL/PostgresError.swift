/// A failed PostgreSQL call.
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure it was.
    public enum Kind: Sendable, Equatable {
        /// The server could not be reached, or the connection broke: retry on a new one.
        case connection
        /// The server did not answer before the call's deadline; the connection is unusable.
        case timeout
        /// The server refused the statement (`sqlstate` says why); the connection is fine.
        case statement
    }

    public var kind: Kind
    /// The SQLSTATE of a refused statement (`40001` serialization failure, ...), else empty.
    public var sqlstate: String
    public var message: String

    public init(kind: Kind, sqlstate: String = "", message: String) {
        self.kind = kind
        self.sqlstate = sqlstate
        self.message = message
    }

    public var description: String {
        switch kind {
        case .connection: "PostgreSQL connection failed: \(message)"
        case .timeout: "PostgreSQL did not answer in time: \(message)"
        case .statement: "PostgreSQL error \(sqlstate): \(message)"
        }
    }

    /// The server could not be reached, or the connection broke.
    public static func connection(_ message: String) -> PostgresError { PostgresError(kind: .connection, message: message) }
    /// The deadline passed while `message` (what was being done).
    public static func timeout(_ message: String) -> PostgresError { PostgresError(kind: .timeout, message: message) }
}
