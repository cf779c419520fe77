import BatchDiff
import BatchDiffJSON

/// Pages and windows: answers about part of a feed's latest collection, read from its rows
/// as patches keep them (``RowOrderCache``), in time proportional to the part asked for and
/// what changed, times a logarithm, whatever the collection's size.
extension Feeds {
    /// A page of feed `id`'s latest collection: `limit` rows (a sectioned feed's sections,
    /// each whole) from `start` (docs/feeds.md §4.1), and the version it is of; shared by
    /// the clients that ask for it (``AnswerCache``).
    package func page(of id: FeedID, from start: PageStart, limit: Int) async throws(FeedError) -> (version: Int, answer: SharedAnswer) {
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
    /// as at the latest waits until it changes (not just the feed), or the wait ends; with
    /// `untilItChanges` false, only until the next version (an event stream, which moves on
    /// to a version that leaves its window as it was without an event).
    package func changes(
        of id: FeedID, since: Int, wait: Duration, window: FeedWindow, options: AnswerOptions = AnswerOptions(), untilItChanges: Bool = true
    ) async throws(FeedError) -> ChangesAnswer {
        let deadline = clock.elapsed() + wait
        // A version that leaves the window as it was becomes the one the next batch is seen
        // from (so it stays one version behind, and retained), answered as from `since`.
        var seen = since
        var answering: (from: Int, oldTotal: Int)?
        while true {
            let found = try await latest(of: id, after: seen, wait: max(.zero, deadline - clock.elapsed()))
            let answer = try await windowChanges(of: id, since: seen, answering: answering, latest: found, window: window, options: options)
            let latest = found.snapshot.version
            guard untilItChanges, answer.operationCount == 0, latest != seen, clock.elapsed() < deadline else {
                return ChangesAnswer(answer: answer.answer(maxChanges: options.maxChanges), latest: latest, operationCount: answer.operationCount)
            }
            if answering == nil { answering = (since, answer.total?.old ?? 0) }
            seen = latest
        }
    }

    /// The window's answer from `since` as `options` ask for it (`maxChanges` aside);
    /// `answering` a client at an earlier version whose window was the same at `since`
    /// (the answer names its version as `from`, and its collection's rows as `total.old`).
    /// The window's batch is seen through the whole collection's batch kept with the write
    /// (for clients one version behind), else through the batches the store keeps with the
    /// versions since (``SeenWindow``), else through the whole collection's diff, computed
    /// once for every window of the version; with `changedMembers` or `values=merge`, through
    /// the whole answer asked with them (they need each reloaded row's old text).
    private func windowChanges(
        of id: FeedID, since: Int, answering: (from: Int, oldTotal: Int)?, latest found: StoredSnapshot, window: FeedWindow, options: AnswerOptions
    ) async throws(FeedError) -> ComputedAnswer {
        let latest = found.snapshot
        guard since <= latest.version else { throw .versionGone(id, since: since, latest: latest.version) }
        let format = options.format
        // What the whole collection's answer is asked with, for what a window's reloads carry
        // beyond their texts.
        let beyondTexts = AnswerOptions(changedMembers: options.changedMembers, values: options.values)
        let question = AnswerCache.Question(
            feed: id, latest: latest.version, asked: .window(since: since, from: answering?.from ?? since, window, options.computed)
        )
        return counted(try await answers.answer(question) { [self] () async throws(FeedError) -> ComputedAnswer in
            // Where the window starts in the latest: at its offset, or just after its anchor.
            let start = if let after = window.after {
                try await reading(found, of: id) { rows throws(FeedError) in try RowCursor(after).windowStart(in: rows, feed: id) }
            } else {
                window.offset
            }
            let placed = FeedWindow(offset: start, limit: window.limit)
            // From version 0 (all inserts) and from the latest (none), no batch.
            let changes = since == 0 || since == latest.version
                ? nil : try await seenWindow(window, from: start, of: id, since: since, latest: found, beyondTexts: beyondTexts)
            var content = try await windowContent(changes?.seen, of: found, id: id, since: since, window: placed)
            if content == nil {
                // Kept batches that do not lead to the latest rows (a damaged store): seen
                // through the whole diff after all.
                metrics.windowBatches[.whole]?.increment()
                let whole = try await self.changes(of: id, since: since, latest: found, options: beyondTexts)
                let oldStart = try await self.oldStart(of: window, start: start, id: id, since: since, through: whole.batch.map { [$0] } ?? [])
                content = try await windowContent(try await Self.seen(from: oldStart, to: placed, through: whole), of: found, id: id, since: since, window: placed)
            }
            guard var content else { throw .internalFailure("feed \(id): the whole batch does not lead to the latest rows") }
            content.take(beyondTexts, from: changes?.whole, oldOffset: changes?.oldStart ?? start, newOffset: start)
            if let answering { content.total.old = answering.oldTotal }
            let written = content
            return try await Workers.run { () throws(FeedError) in
                try FeedAnswers.window(written, feed: id.name, from: answering?.from ?? since, to: latest.version, offset: start, format: format)
            }
        })
    }

    /// `window`, which starts at `start` in `found` (feed `id`'s latest), seen through the
    /// whole collection's batch from `since`: the one kept with the write, else the batches
    /// the store keeps with the versions between (unless they outweigh the collection's text,
    /// or do not read back), else the whole answer (asked with `beyondTexts` when they ask for
    /// changed members or merge entries, and returned for them); and where the window started
    /// in version `since`.
    private func seenWindow(
        _ window: FeedWindow, from start: Int, of id: FeedID, since: Int, latest found: StoredSnapshot, beyondTexts: AnswerOptions
    ) async throws(FeedError) -> (seen: SeenWindow?, whole: ComputedAnswer?, oldStart: Int) {
        let latest = found.snapshot
        let placed = FeedWindow(offset: start, limit: window.limit)
        let throughWhole = beyondTexts != AnswerOptions()
        let kept = throughWhole ? nil : answers.kept(AnswerCache.Question(feed: id, latest: latest.version, asked: .changes(since: since, options: AnswerOptions())))
        if kept == nil, !throughWhole, let stored = try await store.batches(of: id, after: since, through: latest.version),
           stored.reduce(0, { $0 + $1.count }) <= latest.textCount,
           let batches = try? await Workers.run({ () throws(FeedError) in try stored.map(JSONBatch.init(stored:)) }) {
            let oldStart = try await oldStart(of: window, start: start, id: id, since: since, through: batches)
            if let seen = try? await Workers.run({ () throws(FeedError) in try SeenWindow(across: batches, from: oldStart, to: placed) }) {
                metrics.windowBatches[.versions]?.increment()
                return (seen, nil, oldStart)
            }
        }
        metrics.windowBatches[kept != nil ? .kept : .whole]?.increment()
        let whole = if let kept { kept } else { try await changes(of: id, since: since, latest: found, options: beyondTexts) }
        let oldStart = try await oldStart(of: window, start: start, id: id, since: since, through: whole.batch.map { [$0] } ?? [])
        return (try await Self.seen(from: oldStart, to: placed, through: whole), whole, oldStart)
    }

    /// Where `window` started in version `since` of feed `id`, `start` where it starts in the
    /// latest: there too for a window at an offset; for one anchored on a row, mapped back
    /// through `batches` (the versions' since, oldest first), else, where they insert the row
    /// (it changed and moved), found in version `since` read whole.
    /// ``FeedError/anchorGone(_:anchor:inVersion:)`` when that version has no such row.
    private func oldStart(of window: FeedWindow, start: Int, id: FeedID, since: Int, through batches: [JSONBatch]) async throws(FeedError) -> Int {
        guard let after = window.after else { return start }
        if let old = RowCursor.windowStart(start, before: batches) { return old }
        metrics.rowsReadWhole[.anchor]?.increment()
        guard let collection = try await store.collection(at: since, of: id) else {
            throw .versionGone(id, since: since, latest: try await store.latest(of: id)?.snapshot.version ?? since)
        }
        guard let old = RowCursor(after).windowStart(in: collection) else { throw .anchorGone(id, anchor: after, inVersion: since) }
        return old
    }

    /// The window `placed` (of the latest), from `oldStart` in the older version, seen
    /// through `whole`'s batch (`nil` when it holds none).
    private static func seen(from oldStart: Int, to placed: FeedWindow, through whole: ComputedAnswer) async throws(FeedError) -> SeenWindow? {
        try await Workers.run { () throws(FeedError) in try whole.batch.map { batch throws(FeedError) in try SeenWindow(across: [batch], from: oldStart, to: placed) } }
    }

    /// The window's content at `found`, feed `id`'s latest, as `seen` takes it there (`nil`:
    /// from 0, or from the latest); `nil` when `seen` does not lead to the latest rows.
    private func windowContent(_ seen: SeenWindow?, of found: StoredSnapshot, id: FeedID, since: Int, window: FeedWindow) async throws(FeedError) -> WindowContent? {
        try await reading(found, of: id) { rows throws(FeedError) -> WindowContent? in
            switch (rows, seen) {
            case (.list(let list), nil): Self.window(of: list, since: since, window: window)
            case (.list(let list), .list(let seen, let oldTotal, let newTotal)?):
                newTotal == list.order.count ? WindowContent(seen, of: list, from: min(window.offset, list.order.count), total: (oldTotal, newTotal)) : nil
            case (.sectioned(let sections), nil): Self.window(of: sections, since: since, window: window)
            case (.sectioned(let sections), .sectioned(let seen, let oldTotal, let newTotal)?):
                Self.window(of: sections, seen: seen, total: (oldTotal, newTotal), window: window)
            default:
                throw FeedError.internalFailure("feed \(id): a batch of another shape than the feed")
            }
        }
    }

    /// The content of `window` of `sections`, the latest sectioned collection, as `seen`
    /// takes it there; `nil` when `seen`'s sections are not the latest's.
    private static func window(of sections: borrowing SectionedRows, seen: SectionedBatchWindow, total: (old: Int, new: Int), window: FeedWindow) -> WindowContent? {
        let nodes = Self.nodes(of: sections, window: window)
        guard total.new == sections.order.count, seen.batch.newCounts == nodes.map({ sections[$0].rows.count }) else { return nil }
        return WindowContent(seen, of: sections, nodes: nodes, from: min(window.offset, sections.order.count), total: total)
    }

    /// `window` of `list`, the latest list, from version `since`: 0, where every row is
    /// inserted, or the latest, where none changes.
    private static func window(of list: borrowing ListRows, since: Int, window: FeedWindow) -> WindowContent {
        let count = list.order.count
        let seen = since == 0
            ? ListBatchWindow(fromEmptyTo: count, offset: window.offset, limit: window.limit)
            : ListBatchWindow(ListBatch(rows: RowChanges(), oldCount: count, newCount: count), offset: window.offset, limit: window.limit)
        return WindowContent(seen, of: list, from: min(window.offset, count), total: (since == 0 ? 0 : count, count))
    }

    /// `window` of `sections`, the latest sectioned collection, from version `since`: 0 or
    /// the latest.
    private static func window(of sections: borrowing SectionedRows, since: Int, window: FeedWindow) -> WindowContent {
        let count = sections.order.count
        let nodes = Self.nodes(of: sections, window: window)
        let counts = nodes.map { sections[$0].rows.count }
        let seen = since == 0 ? SectionedBatchWindow(fromEmptyTo: counts) : SectionedBatchWindow(unchanged: counts)
        return WindowContent(seen, of: sections, nodes: nodes, from: min(window.offset, count), total: (since == 0 ? 0 : count, count))
    }

    /// The sections of `window` in `sections`.
    private static func nodes(of sections: borrowing SectionedRows, window: FeedWindow) -> [Int32] {
        let count = sections.order.count
        let start = min(window.offset, count)
        return sections.order.rows(at: start..<start + min(window.limit, count - start))
    }

    /// What `read` makes of the rows of `stored` (feed `id`'s latest), on a worker: read in
    /// place from the rows patches keep (under their cache's lock: `read` finds texts and
    /// leaves the writing of answers to after), or when none are kept for that version, from
    /// the version whole (then kept for the reads and patches that follow).
    private func reading<Value: Sendable>(
        _ stored: StoredSnapshot, of id: FeedID, _ read: @escaping @Sendable (borrowing PatchRows) throws(FeedError) -> Value
    ) async throws(FeedError) -> Value {
        let version = stored.snapshot.version
        return try await Workers.run { [rowOrders, metrics] () throws(FeedError) in
            if let kept = try rowOrders.read(id, version: version, read) { return kept }
            metrics.rowsReadWhole[.read]?.increment()
            let rows = try PatchRows(of: stored.snapshot)
            let value = try read(rows)
            rowOrders.keep(rows, for: id, version: version)
            return value
        }
    }
}

/// A window's batch seen from the whole collection's batches (one, or one per version
/// since the client's), and the collection's rows (sections) before them: made from the
/// batches alone, before the latest rows are read.
private enum SeenWindow: Sendable {
    case list(ListBatchWindow, oldTotal: Int, newTotal: Int)
    case sectioned(SectionedBatchWindow, oldTotal: Int, newTotal: Int)

    /// The window `window` of the last version, from the one of its length at `oldStart` of
    /// the first, across `batches`, of consecutive versions.
    init(across batches: [JSONBatch], from oldStart: Int, to window: FeedWindow) throws(FeedError) {
        do {
            switch batches.first {
            case .list(let first)?:
                let lists = batches.compactMap { if case .list(let batch) = $0 { batch } else { nil } }
                guard lists.count == batches.count else { break }
                self = .list(
                    try ListBatchWindow(across: lists, oldOffset: oldStart, newOffset: window.offset, limit: window.limit),
                    oldTotal: first.oldCount, newTotal: lists.last!.newCount
                )
                return
            case .sectioned(let first)?:
                let sectioned = batches.compactMap { if case .sectioned(let batch) = $0 { batch } else { nil } }
                guard sectioned.count == batches.count else { break }
                self = .sectioned(
                    try SectionedBatchWindow(across: sectioned, oldOffset: oldStart, newOffset: window.offset, limit: window.limit),
                    oldTotal: first.oldCounts.count, newTotal: sectioned.last!.newCounts.count
                )
                return
            case nil:
                break
            }
        } catch {
            throw .internalFailure("a window across a feed's versions: \(error)")
        }
        throw .internalFailure("a window across versions of different shapes")
    }
}

