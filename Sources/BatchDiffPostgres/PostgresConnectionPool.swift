import BatchDiffFeeds
import Dispatch
import PostgreSQL
import Synchronization

/// A few connections to the database, each used on its own serial queue, never on the
/// caller's thread (an HTTP server's): libpq calls block their queue up to their deadline.
///
/// Every call has ``callTimeout`` from the moment it is made, waiting for its queue
/// included, so a database that hangs costs a request that long and no more. A connection
/// that broke or timed out is opened again by the next call on its queue; when the store
/// learns the database went away or came back, every idle connection is opened again
/// (``reconnectAll()``), so that no request finds a connection the database has closed.
final class PostgresConnectionPool: Sendable {
    /// How long a call may take, queueing included: within 5 s of a request, a store that
    /// does not answer gets 503 (a write makes two calls, the second only after the first
    /// succeeded).
    static let callTimeout = Duration.seconds(3)

    private let database: PostgresDatabase
    private let slots: [Slot]
    private let next = Atomic<Int>(0)
    /// Bumped when every connection should be opened again.
    private let generation = Atomic<Int>(0)

    /// A queue and the connection used on it.
    private final class Slot: @unchecked Sendable {
        let queue: DispatchQueue
        /// Used on `queue` only.
        var connection: (PostgresConnection, generation: Int)?
        var opened = false

        init(_ index: Int) {
            queue = DispatchQueue(label: "batchdiff.postgres.\(index)")
        }
    }

    init(database: PostgresDatabase, size: Int) {
        self.database = database
        slots = (0..<size).map(Slot.init)
    }

    /// Runs `work` with a connection, before its deadline; at once unavailable while the
    /// listener finds the database down (``PostgresDatabase/isAvailable``). Work that still waits for
    /// its queue when less than `margin` of its time is left fails without touching the
    /// database. A failure of the connection (not of the statement) is tried once more on a
    /// new connection when `retry` is set: only for work that changes nothing.
    func run<Value: Sendable>(
        retry: Bool = false, margin: Duration = .zero,
        _ work: @escaping @Sendable (PostgresConnection, ContinuousClock.Instant) throws(PostgresError) -> Value
    ) async throws(FeedError) -> Value {
        guard database.isAvailable else { throw .storeUnavailable("the database did not answer the last check") }
        let start = ContinuousClock.now
        let deadline = start + Self.callTimeout
        let slot = slots[next.add(1, ordering: .relaxed).oldValue % slots.count]
        let result: Result<Value, PostgresError> = await withCheckedContinuation { continuation in
            slot.queue.async {
                continuation.resume(returning: Result { () throws(PostgresError) -> Value in
                    guard ContinuousClock.now + margin < deadline else { throw .timeout("waiting for a connection") }
                    do throws(PostgresError) {
                        return try self.attempt(work, on: slot, deadline: deadline)
                    } catch where retry && error.kind == .connection {
                        return try self.attempt(work, on: slot, deadline: deadline)
                    }
                })
            }
        }
        database.metrics.record(since: start, failed: (try? result.get()) == nil)
        return try result.mapError(database.feedError).get()
    }

    /// `work` on the slot's connection; a connection that broke or timed out is closed at
    /// once (its statement then ends on the server too).
    private func attempt<Value>(
        _ work: (PostgresConnection, ContinuousClock.Instant) throws(PostgresError) -> Value, on slot: Slot, deadline: ContinuousClock.Instant
    ) throws(PostgresError) -> Value {
        do throws(PostgresError) {
            return try work(connection(of: slot, deadline: deadline), deadline)
        } catch {
            if error.kind != .statement { slot.connection = nil }
            throw error
        }
    }

    /// Opens every connection again before its next use.
    func reconnectAll() {
        generation.add(1, ordering: .relaxed)
    }

    /// The slot's connection, opened (again) when it has none, a broken one, or one of an
    /// earlier generation. Runs on the slot's queue.
    private func connection(of slot: Slot, deadline: ContinuousClock.Instant) throws(PostgresError) -> PostgresConnection {
        let current = generation.load(ordering: .relaxed)
        if let (connection, generation) = slot.connection, generation == current, connection.isUsable { return connection }
        slot.connection = nil
        let connection = try database.open(deadline: deadline)
        if slot.opened { database.metrics.reconnects.increment() }
        slot.opened = true
        slot.connection = (connection, current)
        return connection
    }
}
