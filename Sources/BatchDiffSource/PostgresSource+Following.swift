import BatchDiffFeeds
import Foundation
import Logging
import PostgreSQL

/// The replication stream, followed: connect, make sure of the publication and the slot,
/// stream, apply each transaction at its commit, acknowledge what is stored; on a failure,
/// back off and start again from the slot (docs/sources.md §4, §6).
extension PostgresSource {
    /// A transaction read from the stream up to its commit.
    struct PendingTransaction {
        let xid: UInt32
        var changes: [PgOutputMessage] = []
    }

    /// Follows the stream into `feeds` for the life of the process.
    func follow(from initial: SourceState, into feeds: Feeds) async {
        var state = initial
        var appliedThrough = LogPosition(0)
        var backoff = Duration.milliseconds(100)
        while !Task.isCancelled {
            await takeOfferedShapes(into: &state, feeds: feeds)
            do throws(PostgresError) {
                let (startedAt, slotCreated) = try await startStreaming(state: state)
                if slotCreated && !state.feeds.isEmpty {
                    // The slot was dropped or lost: what the feeds missed is unknown. Each starts again.
                    logger.warning("the replication slot was made again; every sourced feed starts a new series", metadata: ["slot": "\(settings.slot)"])
                    for id in state.feeds.keys { await drop(id, from: &state, in: feeds) }
                }
                appliedThrough = max(appliedThrough, startedAt)
                setOutage(nil)
                logger.notice("following the source database", metadata: ["slot": "\(settings.slot)", "from": "\(appliedThrough)"])
                backoff = .milliseconds(100)
                try await stream(&state, appliedThrough: &appliedThrough, into: feeds)
            } catch {
                let reason = ConninfoRedaction.redacted(error.description, of: settings.conninfo)
                if isAvailable { logger.warning("the source database is out of reach; trying again", metadata: ["reason": "\(reason)"]) }
                setOutage("the source database is out of reach")
                metrics.reconnects.increment()
                connections.disconnect()
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(5))
            }
        }
    }

    /// Makes sure the publication and the slot exist, and starts the stream; returns the
    /// slot's confirmed position and whether the slot had to be made (it was missing, or
    /// invalidated: the WAL it needed is gone, `wal_status` `lost`).
    private func startStreaming(state: SourceState) async throws(PostgresError) -> (LogPosition, Bool) {
        try await connections.run { [settings, logger] replication, query throws(PostgresError) in
            let deadline = ContinuousClock.now + .seconds(10)
            try Self.publish(state.shapes, settings: settings, logger: logger, on: query, deadline: deadline)
            let slots = try query.query(
                "SELECT coalesce(confirmed_flush_lsn::text, '0/0'), coalesce(wal_status, '') FROM pg_replication_slots WHERE slot_name = $1::text",
                [.text(settings.slot)], format: .text, deadline: deadline
            )
            let slot = replication.quotedIdentifier(settings.slot)
            let lost = !slots.isEmpty && slots.text(0, 1) == "lost"
            if lost {
                logger.warning("the replication slot was invalidated (the WAL it needed is gone); it is made again", metadata: ["slot": "\(settings.slot)"])
                try replication.simpleQuery("DROP_REPLICATION_SLOT \(slot) WAIT", deadline: deadline)
            }
            var confirmed = LogPosition(0)
            if slots.isEmpty || lost {
                try replication.simpleQuery("CREATE_REPLICATION_SLOT \(slot) LOGICAL pgoutput NOEXPORT_SNAPSHOT", deadline: deadline)
            } else {
                confirmed = LogPosition(slots.text(0, 0)) ?? LogPosition(0)
            }
            let names = replication.quotedLiteral(query.quotedIdentifier(settings.publication))
            try replication.simpleQuery(
                "START_REPLICATION SLOT \(slot) LOGICAL 0/0 (proto_version '1', publication_names \(names))", deadline: deadline
            )
            return (confirmed, slots.isEmpty || lost)
        }
    }

    /// Makes sure the publication exists and holds every table of `shapes` (one it cannot
    /// add is logged: its changes will not come).
    static func publish(
        _ shapes: [ServedShape], settings: SourceSettings, logger: Logger, on query: PostgresConnection, deadline: ContinuousClock.Instant
    ) throws(PostgresError) {
        let publication = query.quotedIdentifier(settings.publication)
        let tables = Set(shapes.map { query.quotedIdentifier($0.shape.schema) + "." + query.quotedIdentifier($0.shape.table) })
        let exists = try !query.query("SELECT 1 FROM pg_publication WHERE pubname = $1::text", [.text(settings.publication)], deadline: deadline).isEmpty
        guard exists else {
            try query.query("CREATE PUBLICATION \(publication) FOR TABLE \(tables.sorted().joined(separator: ", "))", deadline: deadline)
            return
        }
        let published = try query.query(
            "SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = $1::text", [.text(settings.publication)], format: .text, deadline: deadline
        )
        let have = Set((0..<published.count).map { query.quotedIdentifier(published.text($0, 0)) + "." + query.quotedIdentifier(published.text($0, 1)) })
        for table in tables.subtracting(have).sorted() {
            do throws(PostgresError) {
                try query.query("ALTER PUBLICATION \(publication) ADD TABLE \(table)", deadline: deadline)
            } catch where error.kind == .statement {
                logger.error("the publication lacks a shape's table and cannot be altered", metadata: ["table": "\(table)", "reason": "\(error)"])
            }
        }
    }

    /// Reads the stream until it fails: frames in, transactions applied at their commits,
    /// feeds made when asked, idle ones dropped, the flushed position told back.
    private func stream(_ state: inout SourceState, appliedThrough: inout LogPosition, into feeds: Feeds) async throws(PostgresError) {
        var transaction: PendingTransaction?
        var told = appliedThrough
        var lastTold = ContinuousClock.now
        var lastIdleCheck = ContinuousClock.now
        while true {
            await takeOfferedShapes(into: &state, feeds: feeds)
            for request in takeRequests() {
                request.answer.resume(returning: await make(request.id, in: &state, into: feeds))
            }
            if ContinuousClock.now - lastIdleCheck > .seconds(1) {
                lastIdleCheck = ContinuousClock.now
                for id in idleFeeds(before: ContinuousClock.now - settings.idle) { await drop(id, from: &state, in: feeds) }
            }
            let frames = try await connections.run { [connections] replication, _ throws(PostgresError) in
                connections.clearWake()
                var frames: [[UInt8]] = []
                var deadline = ContinuousClock.now + .seconds(1)
                while frames.count < 1024, let frame = try replication.replicationData(until: deadline, orReadable: connections.wakeDescriptor) {
                    frames.append(frame)
                    deadline = ContinuousClock.now  // what else is already here, without waiting
                }
                return frames
            }
            var replyAsked = false
            var serverEnd = appliedThrough
            for bytes in frames {
                let frame: ReplicationFrame
                let message: PgOutputMessage
                do throws(ReplicationDecodingError) {
                    frame = try ReplicationFrame(decoding: bytes)
                    guard case .data(_, let end, _, let payload) = frame else {
                        if case .keepalive(let end, _, let asked) = frame {
                            replyAsked = replyAsked || asked
                            serverEnd = max(serverEnd, LogPosition(end))
                            // Nothing pending: everything up to the server's end is applied.
                            if transaction == nil { appliedThrough = max(appliedThrough, LogPosition(end)) }
                        }
                        continue
                    }
                    serverEnd = max(serverEnd, LogPosition(end))
                    message = try PgOutputMessage(decoding: payload)
                } catch {
                    throw PostgresError.connection("the replication stream sent what does not read: \(error)")
                }
                switch message {
                case .begin(_, let xid):
                    transaction = PendingTransaction(xid: xid)
                case .relation(let relation):
                    state.describe(relation)
                case .insert(let relation, _), .update(let relation, _, _), .delete(let relation, _):
                    if state.hasFeeds(on: relation) { transaction?.changes.append(message) }
                case .truncate:
                    transaction?.changes.append(message)
                case .commit(_, let end, let commitTime):
                    if let pending = transaction, LogPosition(end) > appliedThrough {
                        try await apply(pending, end: LogPosition(end), commitTime: commitTime, to: &state, into: feeds)
                        appliedThrough = LogPosition(end)
                    }
                    transaction = nil
                case .other:
                    continue
                }
            }
            if !frames.isEmpty { metrics.lagBytes.record(Int(serverEnd.value - min(serverEnd.value, appliedThrough.value))) }
            if replyAsked || appliedThrough > told || ContinuousClock.now - lastTold > .seconds(10) {
                let position = transaction == nil ? appliedThrough : told
                let now = Int64(Date().timeIntervalSince1970 * 1_000_000) - ReplicationFrame.epochOffset
                try await connections.run { replication, _ throws(PostgresError) in
                    try replication.sendReplicationData(ReplicationFrame.statusUpdate(flushed: position.value, now: now), deadline: ContinuousClock.now + .seconds(5))
                }
                told = position
                lastTold = ContinuousClock.now
            }
        }
    }

    /// Applies a committed transaction to the made feeds: one `PATCH` of each feed it
    /// changes, stored before the follower moves on. A feed whose write fails is dropped
    /// (its next read makes it again from a snapshot).
    private func apply(
        _ transaction: PendingTransaction, end: LogPosition, commitTime: Int64, to state: inout SourceState, into feeds: Feeds
    ) async throws(PostgresError) {
        let start = ContinuousClock.now
        metrics.transactions.increment()
        guard !transaction.changes.isEmpty else { return }
        let fetched = try await fetchRows(state.rowsToFetch(transaction.changes), state: state)
        let edits = state.apply(transaction.changes, xid: transaction.xid, end: end, fetched: fetched)
        let patches = edits.compactMap { id, edit -> (FeedID, [UInt8])? in
            guard let feed = state.feeds[id], !edit.changesNothing(in: feed) else { return nil }
            return (id, edit.patch(to: feed, shape: state.shapes[feed.shape]))
        }
        // Each feed takes its own turn, so the feeds' versions are stored side by side; all
        // are stored before the next transaction is applied.
        let failed = await withTaskGroup(of: FeedID?.self) { [logger] group in
            for (id, body) in patches {
                group.addTask {
                    do throws(FeedError) {
                        _ = try await feeds.patch(body, to: id, condition: .exists)
                        return nil
                    } catch {
                        logger.error("a sourced feed's version could not be stored; the feed is dropped and made again when next read", metadata: ["feed": "\(id)", "reason": "\(error)"])
                        return id
                    }
                }
            }
            return await group.reduce(into: [FeedID]()) { failed, id in if let id { failed.append(id) } }
        }
        for id in failed { await drop(id, from: &state, in: feeds) }
        metrics.rowChanges.increment(by: transaction.changes.count)
        metrics.applyTime.record(duration: start.duration(to: .now))
        let committed = Double(commitTime + ReplicationFrame.epochOffset) / 1_000_000
        metrics.lagSeconds.record(max(0, Date().timeIntervalSince1970 - committed))
    }

    /// Rows read from their tables by key (for TOASTed values no feed holds).
    private func fetchRows(_ wanted: [(shape: Int, key: [UInt8])], state: SourceState) async throws(PostgresError) -> [Int: [[UInt8]: SourceRow]] {
        guard !wanted.isEmpty else { return [:] }
        let shapes = state.shapes
        return try await connections.run { _, query throws(PostgresError) in
            var fetched: [Int: [[UInt8]: SourceRow]] = [:]
            for (index, key) in wanted {
                let shape = shapes[index]
                let rows = try query.query(
                    shape.selectByKeyStatement(quoting: query), [.text(String(decoding: key, as: UTF8.self))], format: .text,
                    deadline: ContinuousClock.now + .seconds(5)
                )
                if !rows.isEmpty { fetched[index, default: [:]][key] = shape.row(ofSelected: rows.rows[0]) }
            }
            return fetched
        }
    }
}
