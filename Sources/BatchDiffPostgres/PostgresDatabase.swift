import BatchDiffFeeds
import Logging
import PostgreSQL
import Synchronization

/// One PostgreSQL database as the store's connections open it: connected, its schema
/// migrated once per process (``PostgresSchema``), its failures told apart.
final class PostgresDatabase: Sendable {
    let conninfo: String
    let metrics = StoreMetrics(store: "postgres")
    let logger: Logger
    private let migrated = Atomic<Bool>(false)
    private let available = Atomic<Bool>(false)

    /// The database at `conninfo` (a libpq URI or keyword string, checked here).
    init(conninfo: String, logger: Logger) throws(PostgresError) {
        try PostgresConnection.checkConninfo(conninfo)
        self.conninfo = conninfo
        self.logger = logger
    }

    /// Whether the database answered the listener's last check in time
    /// (``PostgresListener``); store calls fail at once while it did not.
    var isAvailable: Bool { available.load(ordering: .relaxed) }

    /// Records the outcome of the listener's check; returns whether it was available before.
    func setAvailable(_ isAvailable: Bool) -> Bool {
        available.exchange(isAvailable, ordering: .relaxed)
    }

    /// A new connection, ready for the store's statements, before `deadline`.
    func open(deadline: ContinuousClock.Instant) throws(PostgresError) -> PostgresConnection {
        let connection = try PostgresConnection.connect(conninfo, deadline: deadline)
        if !migrated.load(ordering: .acquiring) {
            try PostgresSchema.migrate(connection, deadline: deadline)
            migrated.store(true, ordering: .releasing)
        }
        return connection
    }

    /// The feed error of a failure: the database unreachable or not answering in time is
    /// ``FeedError/storeUnavailable(_:)``; a refused statement is a bug. What libpq said goes
    /// to the log: it names hosts, addresses and users, which a client's answer must not.
    func feedError(_ error: PostgresError) -> FeedError {
        // An outage is logged once by the listener; each call that fails for it, at debug.
        let level: Logger.Level = error.kind == .statement ? .error : .debug
        logger.log(level: level, "a PostgreSQL store call failed", metadata: ["reason": "\(ConninfoRedaction.redacted(error.description, of: conninfo))"])
        switch error.kind {
        case .statement: return .internalFailure("the PostgreSQL store refused a statement (SQLSTATE \(error.sqlstate))")
        case .connection: return .storeUnavailable("the PostgreSQL store cannot be reached")
        case .timeout: return .storeUnavailable("the PostgreSQL store did not answer in time")
        }
    }
}
