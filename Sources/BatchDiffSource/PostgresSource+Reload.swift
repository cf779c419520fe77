import BatchDiffFeeds
import PostgreSQL

/// The shapes file read again (`SIGHUP`, docs/sources.md §2): checked against the database,
/// then taken by the follower between two reads of the stream. Feeds of shapes kept as they
/// were go on; those of shapes removed or changed are dropped (their next read makes a new
/// series); a file that does not read, or a shape that cannot be served, changes nothing.
extension PostgresSource {
    /// Reads the shapes file again and has the follower serve it; returns how many shapes
    /// are served now. Throws a sentence saying why the file is not taken (nothing changed).
    package func reloadShapes() async throws(ShapeError) -> Int {
        let shapes = try Self.readShapes(at: settings.shapesPath)
        let resolved: Result<[ServedShape], ShapeError>
        do throws(PostgresError) {
            resolved = try await resolve(shapes)
        } catch {
            throw unreachable(error)
        }
        let served = try resolved.get()
        do throws(PostgresError) {
            try await connections.run { [settings, logger] _, query throws(PostgresError) in
                try Self.publish(served, settings: settings, logger: logger, on: query, deadline: ContinuousClock.now + .seconds(10))
            }
        } catch {
            throw unreachable(error)
        }
        await withCheckedContinuation { offerShapes(served, answer: $0) }
        return served.count
    }

    /// Serves the shapes offered since the last call, if any: the feeds of shapes found
    /// unchanged among them kept (under their new indexes), every other feed dropped.
    func takeOfferedShapes(into state: inout SourceState, feeds: Feeds) async {
        guard let (shapes, answer) = takeOfferedShapes() else { return }
        var next = SourceState(shapes: shapes)
        for relation in state.relations.values { next.describe(relation) }
        for feed in state.feeds.values {
            let was = state.shapes[feed.shape]
            if let index = shapes.firstIndex(where: { $0.shape == was.shape && $0.tableOID == was.tableOID && $0.columns == was.columns }) {
                next.register(feed.moved(toShape: index))
            } else {
                await drop(feed.id, from: &state, in: feeds)
            }
        }
        state = next
        logger.notice("the shapes file was read again", metadata: ["shapes": "\(shapes.count)", "feeds kept": "\(next.feeds.count)"])
        answer.resume()
    }
}
