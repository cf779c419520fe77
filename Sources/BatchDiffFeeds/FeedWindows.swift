import BatchDiff
import BatchDiffJSON

/// A window of a list feed's rows: `offset..<offset+limit` (docs/feeds.md §5.3).
public struct FeedWindow: Sendable, Hashable {
    public var offset: Int
    public var limit: Int

    public init(offset: Int, limit: Int) {
        self.offset = offset
        self.limit = limit
    }
}

/// Pages and windows: answers about part of a feed's latest collection, read from its rows
/// as patches keep them (``RowOrderCache``), in time proportional to the part asked for and
/// what changed, times a logarithm, whatever the collection's size.
extension Feeds {
    /// A page of feed `id`'s latest collection: `limit` rows (a sectioned feed's sections,
    /// each whole) from `start` (docs/feeds.md §4.1), and the version it is of; shared by
    /// the clients that ask for it (``AnswerCache``).
    public func page(of id: FeedID, from start: PageStart, limit: Int) async throws(FeedError) -> (version: Int, answer: SharedAnswer) {
        guard let stored = try await store.latest(of: id) else { throw .notFound(id) }
        let version = stored.snapshot.version
        let question = AnswerCache.Question(feed: id, latest: version, asked: .page(start, limit: limit))
        let (page, _) = try await answers.answer(question) { [self] () async throws(FeedError) -> ComputedAnswer in
            ComputedAnswer(try await reading(stored, of: id) { rows throws(FeedError) in
                try CollectionPage.write(rows, feed: id, version: version, idKey: stored.idKey, from: start, limit: limit)
            })
        }
        return (version, page.full)
    }

    /// The batch that takes `window` of version `since` of list feed `id` to the same
    /// window of its latest (docs/feeds.md §5.3), as `options` ask for it: rows leaving the
    /// window deleted, rows entering it inserted with their content, counts the window's and
    /// `total` the collection's. Seen through the window from the whole collection's batch
    /// (kept with the write for clients one version behind; computed once, and shared, for
    /// the others); from version 0, the window's rows. With `wait`, a client whose window is
    /// as at the latest waits until it changes (not just the feed), or the wait ends.
    public func changes(
        of id: FeedID, since: Int, wait: Duration, window: FeedWindow, options: AnswerOptions = AnswerOptions()
    ) async throws(FeedError) -> ChangesAnswer {
        let clock = ContinuousClock()
        let deadline = clock.now + wait
        var seen = since
        while true {
            let found = try await latest(of: id, after: seen, wait: max(.zero, deadline - clock.now))
            let answer = try await windowChanges(of: id, since: since, latest: found, window: window, format: options.format)
            let latest = found.snapshot.version
            guard answer.operationCount == 0, latest != seen, clock.now < deadline else {
                return ChangesAnswer(answer: answer.answer(maxChanges: options.maxChanges), latest: latest, operationCount: answer.operationCount)
            }
            seen = latest
        }
    }

    private func windowChanges(
        of id: FeedID, since: Int, latest found: StoredSnapshot, window: FeedWindow, format: AnswerOptions.Format
    ) async throws(FeedError) -> ComputedAnswer {
        let latest = found.snapshot
        guard latest.isList else { throw .unsupportedWindow("feed \(id) is sectioned: windows of sectioned feeds are not answered yet") }
        guard since <= latest.version else { throw .versionGone(id, since: since, latest: latest.version) }
        let question = AnswerCache.Question(feed: id, latest: latest.version, asked: .window(since: since, window, format: format))
        return counted(try await answers.answer(question) { [self] () async throws(FeedError) -> ComputedAnswer in
            // The whole collection's batch, but from version 0 (all inserts) and from the latest (none).
            let batch: ListBatch?
            if since != 0, since != latest.version {
                let whole = try await changes(of: id, since: since, latest: found, options: AnswerOptions())
                guard case .list(let list) = whole.batch else { throw .internalFailure("feed \(id): a list's batch is not a list's") }
                batch = list
            } else {
                batch = nil
            }
            return try await reading(found, of: id) { rows throws(FeedError) in
                guard case .list(let list) = rows else { throw .internalFailure("feed \(id): a list's rows are not a list's") }
                let count = list.order.count
                let seen = if since == 0 {
                    ListBatchWindow(fromEmptyTo: count, offset: window.offset, limit: window.limit)
                } else {
                    ListBatchWindow(
                        batch ?? ListBatch(rows: RowChanges(), oldCount: count, newCount: count), offset: window.offset, limit: window.limit
                    )
                }
                return try FeedAnswers.window(
                    seen, feed: id.name, from: since, to: latest.version, offset: window.offset,
                    total: (old: batch?.oldCount ?? (since == 0 ? 0 : count), new: count), rows: list, format: format
                )
            }
        })
    }

    /// What `read` makes of the rows of `stored` (feed `id`'s latest), on a worker: read in
    /// place from the rows patches keep, or when none are kept for that version, from the
    /// version whole (then kept for the reads and patches that follow).
    private func reading<Value: Sendable>(
        _ stored: StoredSnapshot, of id: FeedID, _ read: @escaping @Sendable (borrowing PatchRows) throws(FeedError) -> Value
    ) async throws(FeedError) -> Value {
        let version = stored.snapshot.version
        return try await Workers.run { [rowOrders] () throws(FeedError) in
            if let kept = try rowOrders.read(id, version: version, read) { return kept }
            let rows = try PatchRows(of: stored.snapshot)
            let value = try read(rows)
            rowOrders.keep(rows, for: id, version: version)
            return value
        }
    }
}
