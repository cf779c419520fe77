import Dispatch
import Glibc
import PostgreSQL

/// The follower's two connections to the source database, used on a queue of their own,
/// never on the caller's thread: the replication connection (`replication=database`,
/// its copy-both stream) and one for snapshots and catalog questions. Both read times as
/// UTC in ISO form, which ``ColumnJSON`` reads.
final class SourceConnections: @unchecked Sendable {
    private let queue = DispatchQueue(label: "batchdiff.source")
    private let conninfo: String
    /// Used on `queue` only.
    private(set) var replication: PostgresConnection?
    private(set) var query: PostgresConnection?
    /// Readable when the stream's wait should end early: a pipe's reading end, and its
    /// writing end.
    let wakeDescriptor: Int32
    private let wakeWriter: Int32

    init(conninfo: String) {
        self.conninfo = conninfo
        var ends: [Int32] = [-1, -1]
        _ = pipe(&ends)
        for end in ends { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
        (wakeDescriptor, wakeWriter) = (ends[0], ends[1])
    }

    deinit {
        close(wakeDescriptor)
        close(wakeWriter)
    }

    /// Ends the stream's current wait (from any thread).
    func wake() {
        var one: UInt8 = 1
        _ = write(wakeWriter, &one, 1)
    }

    /// Runs `work` on the connections' queue, connecting first when either is closed or
    /// broken; a connection failure closes both.
    func run<Value: Sendable>(
        _ work: @escaping @Sendable (_ replication: PostgresConnection, _ query: PostgresConnection) throws(PostgresError) -> Value
    ) async throws(PostgresError) -> Value {
        let result: Result<Value, PostgresError> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Result { () throws(PostgresError) -> Value in
                    do throws(PostgresError) {
                        let (replication, query) = try self.connected()
                        return try work(replication, query)
                    } catch {
                        if error.kind != .statement { self.disconnect() }
                        throw error
                    }
                })
            }
        }
        return try result.get()
    }

    /// Closes both connections; the next ``run(_:)`` opens them again.
    func disconnect() {
        replication = nil
        query = nil
    }

    /// Clears a wake that came before a wait began.
    func clearWake() {
        var drained = [UInt8](repeating: 0, count: 64)
        while read(wakeDescriptor, &drained, drained.count) > 0 {}
    }

    /// Times in ISO form and in UTC, so that every session writes them alike.
    private static let sessionOptions = (keyword: "options", value: "-c DateStyle=ISO,YMD -c TimeZone=UTC -c IntervalStyle=iso_8601")

    private func connected() throws(PostgresError) -> (PostgresConnection, PostgresConnection) {
        if let replication, let query, replication.isUsable, query.isUsable { return (replication, query) }
        disconnect()
        let deadline = ContinuousClock.now + .seconds(5)
        let query = try PostgresConnection.connect(conninfo, settings: [Self.sessionOptions], deadline: deadline)
        let replication = try PostgresConnection.connect(
            conninfo, settings: [Self.sessionOptions, ("replication", "database")], deadline: deadline
        )
        self.query = query
        self.replication = replication
        return (replication, query)
    }
}
