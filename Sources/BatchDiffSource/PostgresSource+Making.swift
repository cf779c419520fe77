import BatchDiffFeeds
import PostgreSQL

/// Feeds made on their first read, from one snapshot of the database placed in the
/// stream (``SnapshotHorizon``), and dropped when nobody reads them.
extension PostgresSource {
    /// Makes feed `id` (a no-op when it is made): its placeholders' values must read back
    /// as themselves in their columns' types, else there is no such feed (404).
    func make(_ id: FeedID, in state: inout SourceState, into feeds: Feeds) async -> Result<Void, FeedError> {
        if state.feeds[id] != nil {
            setMade(id, true)
            return .success(())
        }
        guard let (index, values) = state.match(id) else { return .failure(.notFound(id)) }
        let shape = state.shapes[index]
        let read: Result<(SnapshotHorizon, [SourceRow])?, PostgresError>
        do throws(PostgresError) {
            read = .success(try await connections.run { _, query throws(PostgresError) in try Self.snapshot(of: shape, values: values, on: query) })
        } catch {
            read = .failure(error)
        }
        let horizon: SnapshotHorizon
        let rows: [SourceRow]
        switch read {
        case .failure(let error):
            logger.warning("a sourced feed could not be read from the database", metadata: ["feed": "\(id)", "reason": "\(ConninfoRedaction.redacted(error.description, of: settings.conninfo))"])
            return .failure(error.kind == .statement ? .internalFailure("the source database refused the shape's query (SQLSTATE \(error.sqlstate))") : .sourceUnavailable("the source database is out of reach"))
        case .success(nil):
            return .failure(.notFound(id))
        case .success(let found?):
            (horizon, rows) = found
        }
        var feed = MadeFeed(id: id, shape: index, placeholderValues: values, horizon: horizon, lastRead: .now)
        for row in rows {
            if let key = shape.key(of: row) { feed.set(key, to: row, shape: shape) }
        }
        let text = feed.collectionText(shape: shape)
        do throws(FeedError) {
            do throws(FeedError) {
                _ = try await feeds.write(text, to: id, idKey: shape.keyName, order: (shape.rowOrder, shape.sectionOrder), condition: .none)
            } catch .invalidSnapshot {
                // A feed of this id kept from an earlier shape, with other settings: a new series.
                try await feeds.delete(id)
                _ = try await feeds.write(text, to: id, idKey: shape.keyName, order: (shape.rowOrder, shape.sectionOrder), condition: .none)
            }
        } catch {
            return .failure(error)
        }
        state.register(feed)
        setMade(id, true)
        metrics.feedsMade.increment()
        return .success(())
    }

    /// The rows of `shape`'s feed of placeholder `values` at one snapshot, and where that
    /// snapshot stands; `nil` when a value does not read back as itself in its column's type.
    private static func snapshot(of shape: ServedShape, values: [String], on query: PostgresConnection) throws(PostgresError) -> (SnapshotHorizon, [SourceRow])? {
        let deadline = ContinuousClock.now + .seconds(30)
        for (column, test) in shape.tests {
            guard case .placeholder(let name) = test else { continue }
            let value = values[shape.placeholderNames.firstIndex(of: name)!]
            guard try ServedShape.canonicalText(value, as: shape.columns[column], on: query, deadline: deadline) == value else { return nil }
        }
        try query.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", deadline: deadline)
        do throws(PostgresError) {
            let placed = try query.query("SELECT pg_current_snapshot()::text, pg_current_wal_insert_lsn()::text", format: .text, deadline: deadline)
            let selected = try query.query(shape.selectStatement(quoting: query), values.map { .text($0) }, format: .text, deadline: deadline)
            try query.query("COMMIT", deadline: deadline)
            guard let position = LogPosition(placed.text(0, 1)), let horizon = SnapshotHorizon(snapshot: placed.text(0, 0), position: position) else {
                throw PostgresError(kind: .statement, message: "pg_current_snapshot() read as \(placed.text(0, 0))")
            }
            return (horizon, selected.rows.map(shape.row(ofSelected:)))
        } catch {
            if error.kind == .statement { _ = try? query.query("ROLLBACK", deadline: deadline) }
            throw error
        }
    }

    /// Forgets feed `id` and deletes it: its clients get 404, then 410 from its next
    /// series once it is read again.
    func drop(_ id: FeedID, from state: inout SourceState, in feeds: Feeds) async {
        state.forget(id)
        setMade(id, false)
        metrics.feedsDropped.increment()
        try? await feeds.delete(id)
    }
}
