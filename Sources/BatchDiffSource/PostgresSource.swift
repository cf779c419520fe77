import BatchDiffFeeds
import Foundation
import Logging
import PostgreSQL
import Synchronization

/// Feeds that follow a PostgreSQL database (docs/sources.md): each a shape's rows, made
/// when first read from one snapshot of the database, then given one version per commit
/// that changes them, read from the database's logical replication stream (`pgoutput`).
/// Clients' writes to the shapes' ids are refused; reads make the feeds.
///
/// The stream is followed by one task (``follow(from:)``), which alone changes what the
/// follower knows (``SourceState``); reads that need a feed made ask it and wait.
package final class PostgresSource: FeedSource {
    let settings: SourceSettings
    let logger: Logger
    let connections: SourceConnections
    let metrics = SourceMetrics()
    private let shared: Mutex<Shared>
    private let available = Atomic<Bool>(false)

    /// What reads and the follower share.
    private struct Shared {
        var templates: [FeedTemplate]
        /// The feeds made, each with when it was last read.
        var made: [FeedID: ContinuousClock.Instant] = [:]
        var requests: [(id: FeedID, answer: CheckedContinuation<Result<Void, FeedError>, Never>)] = []
        /// Set while the stream is down: requests are answered with it at once. (Before
        /// the stream first starts, requests wait for it.)
        var outage: String?
        /// Shapes read again and checked, for the follower to serve next, and who waits.
        var offeredShapes: (shapes: [ServedShape], answer: CheckedContinuation<Void, Never>)?
    }

    /// A source of `settings`, its shapes file read (not yet checked against the database:
    /// ``start(feeds:)``); throws a sentence saying what in the file is wrong.
    package init(settings: SourceSettings, logger: Logger) throws(ShapeError) {
        self.settings = settings
        self.logger = logger
        connections = SourceConnections(conninfo: settings.conninfo)
        let shapes = try Self.readShapes(at: settings.shapesPath)
        shared = Mutex(Shared(templates: shapes.map(\.feed)))
        self.shapes = shapes
    }

    /// The shapes as the file gave them.
    let shapes: [Shape]

    static func readShapes(at path: String) throws(ShapeError) -> [Shape] {
        guard let data = FileManager.default.contents(atPath: path) else { throw ShapeError("cannot read the shapes file \(path)") }
        return try Shape.shapes(of: Array(data))
    }

    /// Checks every shape against the database (waiting up to 10 s for it) and starts
    /// following its replication stream into `feeds`; throws a sentence naming a shape
    /// that cannot be served, or saying that the database cannot be reached.
    package func start(feeds: Feeds) async throws(ShapeError) {
        let deadline = ContinuousClock.now + .seconds(10)
        var resolved: Result<[ServedShape], ShapeError>?
        while resolved == nil {
            do throws(PostgresError) {
                resolved = try await resolve(shapes)
            } catch {
                guard ContinuousClock.now < deadline else { throw unreachable(error) }
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
        let state = SourceState(shapes: try resolved!.get())
        Task { await self.follow(from: state, into: feeds) }
    }

    /// `shapes` checked against the database's catalog: the shapes as served, or a sentence
    /// naming one that cannot be; throws when the database cannot be asked.
    func resolve(_ shapes: [Shape]) async throws(PostgresError) -> Result<[ServedShape], ShapeError> {
        try await connections.run { _, query throws(PostgresError) in
            Result { () throws(ShapeError) -> [ServedShape] in
                try shapes.enumerated().map { index, shape throws(ShapeError) in
                    try ServedShape.resolve(shape, index: index, on: query, deadline: ContinuousClock.now + .seconds(5))
                }
            }
        }
    }

    /// Why the shapes could not be checked: the database out of reach (its address redacted).
    func unreachable(_ error: PostgresError) -> ShapeError {
        ShapeError("cannot reach the source database to check the shapes: \(ConninfoRedaction.redacted(error.description, of: settings.conninfo))")
    }

    package func claims(_ id: FeedID) -> Bool {
        shared.withLock { shared in shared.templates.contains { $0.values(in: id.name) != nil } }
    }

    package func prepare(_ id: FeedID) async throws(FeedError) {
        let now = ContinuousClock.now
        let made = shared.withLock { shared in
            guard shared.made[id] != nil else { return false }
            shared.made[id] = now
            return true
        }
        if made { return }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, FeedError>, Never>) in
            let outage = shared.withLock { shared in
                if shared.outage == nil { shared.requests.append((id, continuation)) }
                return shared.outage
            }
            if let outage { continuation.resume(returning: .failure(.sourceUnavailable(outage))) } else { connections.wake() }
        }
        try result.get()
    }

    package var isAvailable: Bool { available.load(ordering: .relaxed) }

    /// The requests to make feeds waiting now, taken.
    func takeRequests() -> [(id: FeedID, answer: CheckedContinuation<Result<Void, FeedError>, Never>)] {
        shared.withLock { shared in
            defer { shared.requests = [] }
            return shared.requests
        }
    }

    /// Records that the stream is up (`nil`) or down (why): while it is down, reads of feeds
    /// not made are answered 503 at once, and readiness fails.
    func setOutage(_ outage: String?) {
        available.store(outage == nil, ordering: .relaxed)
        metrics.up.record(outage == nil ? 1 : 0)
        let waiting = shared.withLock { shared in
            shared.outage = outage
            guard outage != nil else { return [(id: FeedID, answer: CheckedContinuation<Result<Void, FeedError>, Never>)]() }
            defer { shared.requests = [] }
            return shared.requests
        }
        for request in waiting { request.answer.resume(returning: .failure(.sourceUnavailable(outage ?? ""))) }
    }

    /// Records that feed `id` is made (`true`) or forgotten.
    func setMade(_ id: FeedID, _ made: Bool) {
        let now = ContinuousClock.now
        shared.withLock { $0.made[id] = made ? now : nil }
    }

    /// Has the follower serve `shapes` next; `answer` is resumed once it does.
    func offerShapes(_ shapes: [ServedShape], answer: CheckedContinuation<Void, Never>) {
        let replaced = shared.withLock { shared in
            defer { shared.offeredShapes = (shapes, answer) }
            return shared.offeredShapes?.answer
        }
        replaced?.resume()
        connections.wake()
    }

    /// The shapes offered and not yet served, taken; the templates claimed become theirs.
    func takeOfferedShapes() -> (shapes: [ServedShape], answer: CheckedContinuation<Void, Never>)? {
        shared.withLock { shared in
            defer { shared.offeredShapes = nil }
            if let offered = shared.offeredShapes { shared.templates = offered.shapes.map(\.shape.feed) }
            return shared.offeredShapes
        }
    }

    /// The made feeds nobody read since `cutoff`.
    func idleFeeds(before cutoff: ContinuousClock.Instant) -> [FeedID] {
        shared.withLock { shared in shared.made.filter { $0.value < cutoff }.map(\.key) }
    }
}
