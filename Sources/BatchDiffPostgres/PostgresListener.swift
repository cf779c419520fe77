import BatchDiffFeeds
import Dispatch
import Glibc
import Logging
import PostgreSQL
import Synchronization

/// The store's own connection that listens for every server's changes (`LISTEN`) and
/// watches the database: it tells the store's observers of each change within
/// milliseconds of its commit, asks the database every ``pingInterval`` whether it still
/// answers (the store's availability, and so readiness, follows:
/// ``PostgresDatabase/isAvailable``), and has what the store holds counted every few pings.
///
/// When the connection is lost, notifications sent meanwhile are lost with it: the
/// observers hear ``FeedChange/missed`` (long polls read their feeds again), and again
/// once it is back. It runs on a thread of its own for the life of the process.
final class PostgresListener: Sendable {
    static let pingInterval = Duration.seconds(1)
    /// How long the database may take to answer a ping, or to take a new connection.
    static let pingTimeout = Duration.seconds(2)
    /// Pings between counts of feeds and versions.
    private static let pingsPerCount = 5

    private let database: PostgresDatabase
    private let pool: PostgresConnectionPool
    private let observers: FeedObservers
    private let counts = Mutex((feeds: 0, versions: 0))

    init(database: PostgresDatabase, pool: PostgresConnectionPool, observers: FeedObservers) {
        self.database = database
        self.pool = pool
        self.observers = observers
    }

    /// Feeds and versions in the database at the last count.
    var lastCounts: (feeds: Int, versions: Int) { counts.withLock { $0 } }

    /// Starts listening and watching, for good.
    func start() {
        let thread = DispatchQueue(label: "batchdiff.postgres.listener")
        thread.async { self.run() }
    }

    private func run() {
        var connected: PostgresConnection?
        var down = false  // told in the log
        var pings = 0
        while true {
            guard let connection = connected ?? connect(after: &down) else {
                usleep(500_000)
                continue
            }
            connected = connection
            do throws(PostgresError) {
                try listen(on: connection, until: ContinuousClock.now + Self.pingInterval)
                try connection.query("SELECT 1", deadline: ContinuousClock.now + Self.pingTimeout)
                if pings % Self.pingsPerCount == 0 { count() }
                pings += 1
            } catch {
                database.logger.warning("the PostgreSQL store is unavailable", metadata: ["reason": "\(ConninfoRedaction.redacted(error.description, of: database.conninfo))"])
                connected = nil
                down = true
                database.metrics.reconnects.increment()
                lose()
            }
        }
    }

    /// Counts feeds and versions through the pool, in the background: a count may take a
    /// while on a large store, and its time is not the database's health.
    private func count() {
        Task { [self] in
            let rows = try? await pool.run(retry: true) { connection, deadline throws(PostgresError) in
                try connection.query("SELECT (SELECT count(*) FROM batchdiff_feeds), (SELECT count(*) FROM batchdiff_versions)", deadline: deadline)
            }
            if let rows { counts.withLock { $0 = (rows.integer(0, 0), rows.integer(0, 1)) } }
        }
    }

    /// Tells the observers of every change notified until `deadline`.
    private func listen(on connection: PostgresConnection, until deadline: ContinuousClock.Instant) throws(PostgresError) {
        while ContinuousClock.now < deadline {
            for notification in try connection.notifications(until: deadline) {
                if let change = ChangeNotice.change(of: notification.payload) { observers.notify(change) }
            }
        }
    }

    /// A new listening connection, or `nil` (the store unavailable) when the database
    /// cannot be reached now; `down` says whether the log has told it is.
    private func connect(after down: inout Bool) -> PostgresConnection? {
        do throws(PostgresError) {
            let deadline = ContinuousClock.now + Self.pingTimeout
            let connection = try database.open(deadline: deadline)
            try connection.query("LISTEN \(ChangeNotice.channel)", deadline: deadline)
            if down { database.logger.notice("the PostgreSQL store is available again") }
            down = false
            _ = database.setAvailable(true)
            // Changes made while nobody listened are unknown; idle connections may be dead.
            pool.reconnectAll()
            observers.notify(.missed)
            return connection
        } catch {
            if !down { database.logger.warning("cannot reach the PostgreSQL store; trying again", metadata: ["reason": "\(ConninfoRedaction.redacted(error.description, of: database.conninfo))"]) }
            down = true
            lose()
            return nil
        }
    }

    private func lose() {
        let wasAvailable = database.setAvailable(false)
        guard wasAvailable else { return }
        pool.reconnectAll()
        observers.notify(.missed)
    }
}
