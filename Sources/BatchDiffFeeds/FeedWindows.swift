import BatchDiff
import BatchDiffJSON

/// A window of a feed: a list's rows, or a sectioned collection's sections, each whole,
/// `offset..<offset+limit` (docs/feeds.md §5.3).
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
            let page = try await reading(stored, of: id) { rows throws(FeedError) in try CollectionPage(rows, feed: id, from: start, limit: limit) }
            return await Workers.run { ComputedAnswer(page.answer(feed: id, version: version, idKey: stored.idKey)) }
        }
        return (version, page.full)
    }

    /// The batch that takes `window` of version `since` of feed `id` to the same window of
    /// its latest (docs/feeds.md §5.3), as `options` ask for it: rows (sections) leaving the
    /// window deleted, those entering it inserted with their content, counts the window's
    /// and `total` the collection's. Seen through the window from the whole collection's batch
    /// (kept with the write for clients one version behind; computed once, and shared, for
    /// the others); from version 0, the window's rows. With `wait`, a client whose window is
    /// as at the latest waits until it changes (not just the feed), or the wait ends.
    public func changes(
        of id: FeedID, since: Int, wait: Duration, window: FeedWindow, options: AnswerOptions = AnswerOptions()
    ) async throws(FeedError) -> ChangesAnswer {
        let clock = ContinuousClock()
        let deadline = clock.now + wait
        // A version that leaves the window as it was becomes the one the next batch is seen
        // from (so it stays one version behind, and retained), answered as from `since`.
        var seen = since
        var answering: (from: Int, oldTotal: Int)?
        while true {
            let found = try await latest(of: id, after: seen, wait: max(.zero, deadline - clock.now))
            let answer = try await windowChanges(of: id, since: seen, answering: answering, latest: found, window: window, options: options)
            let latest = found.snapshot.version
            guard answer.operationCount == 0, latest != seen, clock.now < deadline else {
                return ChangesAnswer(answer: answer.answer(maxChanges: options.maxChanges), latest: latest, operationCount: answer.operationCount)
            }
            if answering == nil { answering = (since, answer.total?.old ?? 0) }
            seen = latest
        }
    }

    /// The window's answer from `since` as `options` ask for it (`maxChanges` aside);
    /// `answering` a client at an earlier version whose window was the same at `since`
    /// (the answer names its version as `from`, and its collection's rows as `total.old`).
    /// With `changedMembers`, the whole collection's batch is the one asked with them
    /// (computed once for every window of the version: they need each reloaded row's old text).
    private func windowChanges(
        of id: FeedID, since: Int, answering: (from: Int, oldTotal: Int)?, latest found: StoredSnapshot, window: FeedWindow, options: AnswerOptions
    ) async throws(FeedError) -> ComputedAnswer {
        let latest = found.snapshot
        guard since <= latest.version else { throw .versionGone(id, since: since, latest: latest.version) }
        guard latest.isList || options.format != .jsonPatch else {
            throw .unsupportedWindow("format: a sectioned window is not answered as a JSON Patch yet (docs/feeds.md §12); ask for the batch or steps format")
        }
        let (format, withMembers) = (options.format, options.changedMembers)
        let question = AnswerCache.Question(
            feed: id, latest: latest.version,
            asked: .window(since: since, from: answering?.from ?? since, window, format: format, changedMembers: withMembers)
        )
        return counted(try await answers.answer(question) { [self] () async throws(FeedError) -> ComputedAnswer in
            // The whole collection's batch, but from version 0 (all inserts) and from the latest (none).
            let whole = since == 0 || since == latest.version
                ? nil : try await changes(of: id, since: since, latest: found, options: AnswerOptions(changedMembers: withMembers))
            var content = try await reading(found, of: id) { rows throws(FeedError) in
                switch (rows, whole?.batch) {
                case (.list(let list), nil), (.list(let list), .list?):
                    Self.window(of: list, whole: whole?.batch, since: since, window: window)
                case (.sectioned(let sections), nil), (.sectioned(let sections), .sectioned?):
                    Self.window(of: sections, whole: whole?.batch, since: since, window: window)
                default:
                    throw FeedError.internalFailure("feed \(id): a batch of another shape than the feed")
                }
            }
            if withMembers { content.takeChangedMembers(from: whole, offset: window.offset) }
            if let answering { content.total.old = answering.oldTotal }
            let written = content
            return try await Workers.run { () throws(FeedError) in
                try FeedAnswers.window(written, feed: id.name, from: answering?.from ?? since, to: latest.version, offset: window.offset, format: format)
            }
        })
    }

    /// `window` of `list`, the latest list, from version `since` (`whole`: the list's batch
    /// from it; `nil` from 0, where every row is inserted, and from the latest).
    private static func window(of list: borrowing ListRows, whole: JSONBatch?, since: Int, window: FeedWindow) -> WindowContent {
        let count = list.order.count
        let start = min(window.offset, count)
        guard case .list(let batch) = whole else {
            let seen = since == 0
                ? ListBatchWindow(fromEmptyTo: count, offset: window.offset, limit: window.limit)
                : ListBatchWindow(ListBatch(rows: RowChanges(), oldCount: count, newCount: count), offset: window.offset, limit: window.limit)
            return WindowContent(seen, of: list, from: start, total: (since == 0 ? 0 : count, count))
        }
        return WindowContent(ListBatchWindow(batch, offset: window.offset, limit: window.limit), of: list, from: start, total: (batch.oldCount, count))
    }

    /// `window` of `sections`, the latest sectioned collection, from version `since`
    /// (`whole`: its batch from it; `nil` from 0 and from the latest).
    private static func window(of sections: borrowing SectionedRows, whole: JSONBatch?, since: Int, window: FeedWindow) -> WindowContent {
        let count = sections.order.count
        let start = min(window.offset, count)
        let nodes = sections.order.rows(at: start..<start + min(window.limit, count - start))
        guard case .sectioned(let batch) = whole else {
            let counts = nodes.map { sections[$0].rows.count }
            let seen = since == 0 ? SectionedBatchWindow(fromEmptyTo: counts) : SectionedBatchWindow(unchanged: counts)
            return WindowContent(seen, of: sections, nodes: nodes, from: start, total: (since == 0 ? 0 : count, count))
        }
        let seen = SectionedBatchWindow(batch, offset: window.offset, limit: window.limit)
        return WindowContent(seen, of: sections, nodes: nodes, from: start, total: (batch.oldCounts.count, count))
    }

    /// What `read` makes of the rows of `stored` (feed `id`'s latest), on a worker: read in
    /// place from the rows patches keep (under their cache's lock: `read` finds texts and
    /// leaves the writing of answers to after), or when none are kept for that version, from
    /// the version whole (then kept for the reads and patches that follow).
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
