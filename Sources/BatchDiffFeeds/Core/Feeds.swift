import BatchDiff
import BatchDiffJSON

/// The feed core: versioned snapshots of collections, the batch between any retained
/// version and the latest, answers kept and shared, and long polls (docs/feeds.md).
///
/// Feeds live in a ``FeedStore``; this type adds what every store needs on top: diffs
/// (made on ``Workers``, never on the caller's thread), answers kept for reuse, and long
/// polls woken with each new version, whichever process made it. It knows nothing of
/// HTTP: it answers with JSON bytes and throws ``FeedError``.
public final class Feeds: Sendable {
    let store: any FeedStore
    let answers: AnswerCache
    private let longPolls: LongPolls
    private let maxBytes: Int
    let metrics = FeedMetrics()
    private let series: VersionSeries
    private let turns = WriteTurns()
    let rowOrders: RowOrderCache

    /// Feeds kept in `store`; the answers kept for reuse and what the store holds in memory
    /// stay within `maxFeedMemory` bytes, answers being dropped first. A new series of
    /// versions starts at `clock()` or above (``VersionSeries``; microseconds since 1970 by
    /// default).
    public init(store: any FeedStore, maxFeedMemory: Int, clock: (@Sendable () -> Int)? = nil) {
        self.store = store
        maxBytes = maxFeedMemory
        // Row orders take at most a quarter of the room (a list's order about as much as its text).
        let rowOrders = RowOrderCache(budget: maxFeedMemory / 4)
        self.rowOrders = rowOrders
        // Versions kept for long polls to come are the store's latest, whose memory they share.
        longPolls = LongPolls(idleBudget: maxFeedMemory / 16)
        // Answers are kept in what the store leaves of the memory feeds may hold.
        answers = AnswerCache { [store, rowOrders] in maxFeedMemory - store.bytesInMemory - rowOrders.bytes }
        series = clock.map(VersionSeries.init(clock:)) ?? VersionSeries()
        // Held weakly: the store holds its observers.
        store.observe { [weak self] change in self?.observed(change) }
    }

    /// What another process sharing the store changed (``FeedStore/observe(_:)``; a
    /// shared store may tell this process's own changes too): long polls waiting on a feed
    /// another process wrote or deleted are woken with its new latest version, read once for
    /// all of them.
    private func observed(_ change: FeedChange) {
        switch change {
        case .appended(let id, let version):
            series.saw(version)
            answers.drop(id, olderThan: version)
            if longPolls.wouldWake(version, of: id) { wakeWithLatest(of: id) }
        case .deleted(let id):
            // Read, not taken as said: the feed may have been created again since.
            answers.drop(id, olderThan: nil)
            if longPolls.areParked(on: id) { wakeWithLatest(of: id) }
        case .missed:
            for id in longPolls.forgetLatest() { wakeWithLatest(of: id) }
        }
    }

    /// Reads feed `id`'s latest version and wakes the long polls on it with it (or with its
    /// deletion, or the store's failure).
    private func wakeWithLatest(of id: FeedID) {
        Task { [store, longPolls] in
            do throws(FeedError) {
                if let latest = try await store.latest(of: id) {
                    longPolls.wake(id, with: latest)
                } else {
                    longPolls.wakeAll(id, with: .deleted)
                }
            } catch {
                longPolls.wakeAll(id, with: .failed(error))
            }
        }
    }

    /// Stores the JSON `text` as the next version of feed `id` unless it equals the latest;
    /// creates the feed (with the identity member `idKey`, default `id`, and
    /// `uniqueIdentities`, default false) when it is new, its first version starting a new
    /// series (``VersionSeries``). A write that names either setting must name the feed's.
    /// A feed with unique identities refuses a snapshot that repeats one
    /// (``FeedError/duplicateIdentity(_:)``). Writes to one feed take turns in the order they
    /// call (``WriteTurns``); the text is read in the write's turn, on a worker. The answer's
    /// batch is as `options` ask for it.
    public func write(
        _ text: [UInt8], to id: FeedID, idKey requested: String?, uniqueIdentities: Bool? = nil, condition: WriteCondition,
        options: AnswerOptions = AnswerOptions()
    ) async throws(FeedError) -> FeedWrite {
        try await turns.inTurn(for: id) { () async throws(FeedError) -> FeedWrite in
            // Read with the identity member the write names, else the feed's: read again only
            // when they differ (an error answer) or another process changed the feed meanwhile.
            let stored = try await store.latest(of: id)
            let readWith = requested ?? stored?.idKey ?? "id"
            let document = try await Workers.run { () throws(FeedError) in try Snapshot.document(text, idKey: readWith, asWritten: true) }
            return try await write(
                (document, readWith), over: stored, to: id, requested: (requested, uniqueIdentities), condition: condition, options: options
            )
        }
    }

    /// ``write(_:to:idKey:uniqueIdentities:condition:options:)`` of a text read over
    /// `first`, the feed's latest as read before: a store shared with other processes may
    /// still move on meanwhile, and the write then tries again from the new latest.
    /// `requested` holds the settings the write names.
    private func write(
        _ read: (document: JSONDocument, idKey: String), over first: StoredSnapshot?, to id: FeedID,
        requested: (idKey: String?, uniqueIdentities: Bool?), condition: WriteCondition, options: AnswerOptions
    ) async throws(FeedError) -> FeedWrite {
        var parsed: (idKey: String, snapshot: Snapshot)?
        var stored = first
        while true {
            guard stored != nil || condition.holds(forLatest: nil) else { throw .conditionFailed(id, latest: nil) }
            let settings = stored?.settings ?? FeedSettings(idKey: requested.idKey ?? "id", uniqueIdentities: requested.uniqueIdentities ?? false)
            let idKey = settings.idKey
            if let requested = requested.idKey, requested != idKey {
                throw .invalidSnapshot("feed \(id) uses idKey \(idKey.debugDescription); it cannot change to \(requested.debugDescription)")
            }
            if let requested = requested.uniqueIdentities, requested != settings.uniqueIdentities {
                throw .invalidSnapshot("feed \(id) was created with uniqueIdentities=\(settings.uniqueIdentities); it cannot change to \(requested)")
            }
            if parsed?.idKey != idKey {
                parsed = (idKey, try await Workers.run { () throws(FeedError) in
                    // (Read again with the feed's idKey: its members were checked the first time.)
                    let document = read.idKey == idKey ? read.document : try Snapshot.document(read.document.bytes, idKey: idKey)
                    return try Snapshot(document: document, idKey: idKey)
                })
            }
            if let write = try await commit(parsed!.snapshot, over: stored, to: id, settings: settings, condition: condition, options: options) {
                return write
            }
            stored = try await store.latest(of: id)
        }
    }

    /// Changes feed `id` by the ops of the JSON text `body` (``FeedPatch``), as one new
    /// version unless they leave it as it was: ``FeedError/notFound(_:)`` for a feed that
    /// does not exist, ``FeedError/patchRefused(_:)`` for an op that cannot be applied
    /// (nothing changes). It takes its turn as a `PUT` does, and is answered as one. Under an
    /// `idempotencyKey`, the answer is kept with the version in the store, and a repeat of
    /// the key with the same body gets it again and changes nothing
    /// (``FeedError/idempotencyKeyReused(_:key:)`` with another body).
    public func patch(
        _ body: [UInt8], to id: FeedID, condition: WriteCondition, idempotencyKey key: String? = nil, options: AnswerOptions = AnswerOptions()
    ) async throws(FeedError) -> FeedWrite {
        let patch = try await Workers.run { () throws(FeedError) in try FeedPatch(body: body) }
        return try await turns.inTurn(for: id) { () async throws(FeedError) -> FeedWrite in
            // A store shared with other processes may move on meanwhile: then the ops are
            // applied again to the new latest (and the key looked for again).
            while true {
                guard let stored = try await store.latest(of: id) else { throw .notFound(id) }
                if let key, let kept = try await store.keptAnswer(for: key, of: id) {
                    guard kept.request == patch.checksum else { throw .idempotencyKeyReused(id, key: key) }
                    return FeedWrite(version: kept.version, changed: kept.changed, body: kept.body, textCount: 0)
                }
                guard condition.holds(forLatest: stored.snapshot.version) else { throw .conditionFailed(id, latest: stored.snapshot.version) }
                if let write = try await patched(patch, over: stored, to: id, options: options, keeping: key.map { ($0, patch.checksum) }) {
                    return write
                }
            }
        }
    }

    /// Applies `patch` to `stored` (feed `id`'s latest as just read) and stores the version
    /// it makes, unless it leaves the collection as it was, in time proportional to what it
    /// names (times a logarithm): the collection as the patch before left it
    /// (``RowOrderCache``; read again from the version when there is none), the batch and the
    /// changes of text found from what the ops name (``ListPatchChange``,
    /// ``SectionedPatchChange``), the version kept as its change until it is read whole. `nil`
    /// when the store moved on meanwhile.
    private func patched(
        _ patch: FeedPatch, over stored: StoredSnapshot, to id: FeedID, options: AnswerOptions, keeping key: (key: String, request: UInt64)?
    ) async throws(FeedError) -> FeedWrite? {
        let base = stored.snapshot
        let (rows, change, wasKept) = try await Workers.run { [rowOrders, metrics] () throws(FeedError) in
            var kept = rowOrders.take(id, version: base.version)
            let wasKept = kept != nil
            if !wasKept { metrics.rowsReadWhole[.read]?.increment() }
            // Handed on, not copied: the patch changes the only copy in place.
            let rows = if let rows = kept.take() { rows } else { try PatchRows(of: base) }
            let (after, change) = try rows.patched(by: patch, settings: stored.settings)
            return (after, change, wasKept)
        }
        guard change.batch.operationCount > 0 else {
            // Rows that still read as the version does serve the next patch (a retried
            // patch would otherwise cost the next one the whole collection).
            if change.leavesTextAsItWas, rows.isWorthKeeping { rowOrders.keep(rows, for: id, version: base.version) }
            return try await unchanged(stored, batch: change.batch, to: id, options: options, keeping: key)
        }
        let followed = isFollowed(id, at: base.version)
        let (next, made) = try await Workers.run { () throws(FeedError) in
            var next = Snapshot(patching: base, by: change.forward, textCount: change.textCount, idKey: stored.idKey).numbered(base.version + 1)
            // Written whole once the changes it is read through pass its text's length: so
            // reading it whole costs at most about twice what writing it whole would.
            if next.chainBytes > next.textCount { next = next.written }
            let members = options.changedMembers
                ? try Self.changedMembers(of: change.batch, from: (base.collection, base.bytes), to: next, options: options) : nil
            let write = try FeedAnswers.write(
                feed: id.name, version: next.version, changed: true, batch: change.batch, options: options, changedMembers: members
            )
            let changes = followed
                ? FeedAnswers.computed(
                    feed: id.name, from: base.version, latest: next, batch: change.batch,
                    full: try FeedAnswers.changes(feed: id.name, from: base.version, to: next.version, batch: change.batch, values: change.values)
                ) : nil
            return (next, (write: write, changes: changes, batch: change.batch.stored))
        }
        let keptAnswer = key.map { KeptAnswer(key: $0.key, request: $0.request, version: next.version, changed: true, body: made.write) }
        let version = NewVersion(next, base: base, changes: (change.forward, change.backward), batch: made.batch, keeping: keptAnswer)
        guard try await append(version, answering: made.changes, since: base.version, to: id, settings: stored.settings, after: base.version) else {
            return nil
        }
        if rows.isWorthKeeping { rowOrders.keep(rows, for: id, version: next.version) }
        return FeedWrite(version: next.version, changed: true, body: made.write, textCount: patch.text.count + (wasKept ? 0 : base.textCount))
    }

    /// The answer to a write that leaves feed `id`'s latest version `stored` as it is:
    /// `batch`, which changes nothing; kept under `key`, when given, with that version.
    private func unchanged(
        _ stored: StoredSnapshot, batch: JSONBatch, to id: FeedID, options: AnswerOptions, keeping key: (key: String, request: UInt64)?
    ) async throws(FeedError) -> FeedWrite {
        let latest = stored.snapshot
        let members = options.changedMembers
            ? try Self.changedMembers(of: batch, from: (latest.collection, latest.bytes), to: latest, options: options) : nil
        let body = try FeedAnswers.write(feed: id.name, version: latest.version, changed: false, batch: batch, options: options, changedMembers: members)
        if let key { try await store.keep(KeptAnswer(key: key.key, request: key.request, version: latest.version, changed: false, body: body), for: id) }
        return FeedWrite(version: latest.version, changed: false, body: body, textCount: latest.textCount)
    }

    /// Stores `snapshot` as the version after `stored` (feed `id`'s latest as just read;
    /// `nil` creates the feed with `settings`) when `condition` holds, it keeps the feed's
    /// rules and it differs from `stored`; its answer as `options` ask for it. `nil` when the
    /// store moved on meanwhile (another process wrote): the caller tries again. With
    /// `keeping` (an `Idempotency-Key` and the request's checksum), the answer is kept with
    /// the version it names.
    private func commit(
        _ snapshot: Snapshot, over stored: StoredSnapshot?, to id: FeedID, settings: FeedSettings, condition: WriteCondition,
        options: AnswerOptions, keeping key: (key: String, request: UInt64)? = nil
    ) async throws(FeedError) -> FeedWrite? {
        let previous = stored?.snapshot.version
        if settings.uniqueIdentities {
            let repeated = await Workers.run { snapshot.collection.firstRepeatedIdentity(path: "body") }
            if let repeated { throw .duplicateIdentity("feed \(id) keeps its identities unique: \(repeated)") }
        }
        if let stored {
            let latest = stored.snapshot.version
            guard condition.holds(forLatest: latest) else { throw .conditionFailed(id, latest: latest) }
            if stored.snapshot.fingerprint == snapshot.fingerprint {
                return try await unchanged(stored, batch: JSONBatch.unchanged(stored.snapshot.collection), to: id, options: options, keeping: key)
            }
        }
        let next = snapshot.numbered(previous.map { $0 + 1 } ?? series.start())
        // A new feed's base is the empty collection, version 0, where its clients start.
        let base = stored?.snapshot ?? Snapshot(emptyLike: snapshot.collection)
        let followed = isFollowed(id, at: base.version)
        let made = try await Workers.run { () throws(FeedError) in
            try Self.answers(writing: next, over: base, to: id, options: options, answeringClients: followed)
        }
        let kept = key.map { KeptAnswer(key: $0.key, request: $0.request, version: next.version, changed: true, body: made.write) }
        let version = NewVersion(next, base: stored?.snapshot, origins: made.origins, batch: made.batch, keeping: kept)
        guard try await append(version, answering: made.changes, since: base.version, to: id, settings: settings, after: previous) else { return nil }
        if rowOrders.drop(id) { await keepRowOrder(of: next, for: id) }
        return FeedWrite(version: next.version, changed: true, body: made.write, textCount: next.textCount)
    }

    /// Stores `version` as the next of feed `id` (created with `settings` when `previous`
    /// is `nil`), keeps `answer`, when there is one, its batch for clients at version
    /// `since`, for them, then wakes the long polls on the feed with the version; `false`
    /// when the store moved on meanwhile. Room for it is made by dropping the answers kept
    /// first.
    private func append(
        _ version: NewVersion, answering answer: ComputedAnswer?, since: Int, to id: FeedID, settings: FeedSettings, after previous: Int?
    ) async throws(FeedError) -> Bool {
        let next = version.snapshot
        if answers.bytes + rowOrders.bytes + store.bytesInMemory + next.byteEstimate > maxBytes { answers.removeAll() }
        guard try await store.append(version, to: id, settings: settings, after: previous) else { return false }
        series.saw(next.version)
        answers.drop(id, olderThan: next.version)
        if let answer {
            metrics.answersComputed.increment()
            answers.keep(answer, for: AnswerCache.Question(feed: id, latest: next.version, asked: .changes(since: since, options: AnswerOptions())))
        }
        longPolls.wake(id, with: StoredSnapshot(settings: settings, snapshot: next))
        return true
    }

    /// Keeps the rows of `snapshot`, feed `id`'s new latest written whole, for the windows,
    /// pages and patches that follow, which would otherwise each read it whole first (a
    /// window asked right after a `PUT` cost the whole collection): the write has read every
    /// row already. Only for a feed whose rows were kept before, as windows, pages and
    /// patches keep them: a feed only ever written whole and read whole never pays for it.
    private func keepRowOrder(of snapshot: Snapshot, for id: FeedID) async {
        guard let rows = await Workers.run({ try? PatchRows(of: snapshot) }), rows.isWorthKeeping else { return }
        metrics.rowsReadWhole[.write]?.increment()
        rowOrders.keep(rows, for: id, version: snapshot.version)
    }

    /// Whether clients follow feed `id` at `version`, its latest: a long poll or event
    /// stream waits on it, or a client asked about that version. A write makes their answer
    /// with it; a feed nobody follows (most of a million per-user feeds) keeps none.
    private func isFollowed(_ id: FeedID, at version: Int) -> Bool {
        longPolls.areParked(on: id) || answers.wasAsked(id, atLatest: version)
    }

    /// The answer to the write of `latest` (numbered) over `base`, as `options` ask for
    /// it, the answer for clients at `base` when `answeringClients` (they ask next, most
    /// without options), the row of `base` each row of `latest` is unchanged from, and the
    /// batch from `base` as stores keep it (``NewVersion``).
    private static func answers(
        writing latest: Snapshot, over base: Snapshot, to id: FeedID, options: AnswerOptions, answeringClients: Bool
    ) throws(FeedError) -> (write: [UInt8], changes: ComputedAnswer?, origins: [Int?], batch: [UInt8]) {
        guard base.collection.shapeName == latest.collection.shapeName else {
            throw .invalidSnapshot("feed \(id) holds \(base.collection.shapeName); this snapshot is \(latest.collection.shapeName)")
        }
        let batch = try batch(from: base.collection, to: latest.collection)
        let changes = answeringClients
            ? FeedAnswers.computed(
                feed: id.name, from: base.version, latest: latest, batch: batch,
                full: try FeedAnswers.changes(feed: id.name, from: base.version, latest: latest, batch: batch)
            ) : nil
        let changed = try changedMembers(of: batch, from: (base.collection, base.bytes), to: latest, options: options)
        let write = try FeedAnswers.write(feed: id.name, version: latest.version, changed: true, batch: batch, options: options, changedMembers: changed)
        // Only over a stored version (a new feed's base is the empty collection); without
        // them, a store keeps the version whole.
        let origins = base.version == 0 ? [] : (try? batch.unchangedRowOrigins()) ?? []
        return (write, changes, origins, base.version == 0 ? [] : batch.stored)
    }

    /// The changed members of `batch` from `old` (a collection and the text it was read
    /// from) to `new`, when `options` ask for them and the batch is not answered as a reload.
    private static func changedMembers(
        of batch: JSONBatch, from old: (collection: JSONCollection, text: [UInt8]), to new: Snapshot, options: AnswerOptions
    ) throws(FeedError) -> ChangedMembers? {
        guard options.changedMembers, !options.reloads(batch) else { return nil }
        do {
            return try ChangedMembers(of: batch, old: old.collection, oldText: old.text, new: new.collection, newText: new.bytes)
        } catch {
            throw .internalFailure("the changed members of a batch: \(error)")
        }
    }

    private static func batch(from old: JSONCollection, to new: JSONCollection) throws(FeedError) -> JSONBatch {
        do {
            return try JSONBatch(from: old, to: new, options: DiffOptions())
        } catch {
            throw .internalFailure("a feed's versions of different shapes: \(error)")
        }
    }

    /// The latest version of feed `id` and its answer, `{"feed","version","data"}`.
    public func latest(of id: FeedID) async throws(FeedError) -> FeedDocument {
        guard let stored = try await store.latest(of: id) else { throw .notFound(id) }
        return FeedDocument(feed: id, snapshot: stored.snapshot, answers: answers)
    }

    /// The batch from version `since` of feed `id` to its latest, with the values, as
    /// `options` ask for it. A client at the latest waits up to `wait` for the next version
    /// (a long poll). Clients that differ only in `maxChanges` share one computation.
    public func changes(
        of id: FeedID, since: Int, wait: Duration, options: AnswerOptions = AnswerOptions()
    ) async throws(FeedError) -> ChangesAnswer {
        let found = try await latest(of: id, after: since, wait: wait)
        let answer = try await changes(of: id, since: since, latest: found, options: options)
        return ChangesAnswer(answer: answer.answer(maxChanges: options.maxChanges), latest: found.snapshot.version, operationCount: answer.operationCount)
    }

    /// The answer from version `since` of feed `id` to `found`, its latest (or, for a
    /// range, the version it ends at), as `options` ask for it (`maxChanges` aside): kept, or
    /// computed once however many ask.
    func changes(
        of id: FeedID, since: Int, latest found: StoredSnapshot, options: AnswerOptions, isRange: Bool = false
    ) async throws(FeedError) -> ComputedAnswer {
        let (latest, idKey) = (found.snapshot, found.idKey)
        // Newer than the latest: a version of an earlier series (docs/feeds.md §2).
        guard since <= latest.version else { throw .versionGone(id, since: since, latest: latest.version) }
        let asked: AnswerCache.Asked = isRange
            ? .range(since: since, format: options.format, changedMembers: options.changedMembers) : .changes(since: since, options: options)
        let question = AnswerCache.Question(feed: id, latest: latest.version, asked: asked)
        // Computed as the question asks, `maxChanges` aside: the answer serves every client
        // of the question, whatever `maxChanges` each sends (the first one's must not leave
        // out the changed members the others get).
        let computed = AnswerOptions(format: options.format, changedMembers: options.changedMembers)
        return counted(try await answers.answer(question) { [store] () async throws(FeedError) -> ComputedAnswer in
            let withText = options.changedMembers || options.format == .jsonPatch
            let old = try await Self.version(since, of: id, latest: latest, withText: withText, in: store)
            return try await Workers.run { () throws(FeedError) in
                let batch = try Self.batch(from: old.collection, to: latest.collection)
                let members = options.format == .jsonPatch ? nil : try Self.changedMembers(of: batch, from: old, to: latest, options: computed)
                let full = options.format == .jsonPatch
                    ? try FeedAnswers.patch(batch, from: old, to: latest, idKey: idKey)
                    : try FeedAnswers.changes(
                        feed: id.name, from: since, latest: latest, batch: batch, format: options.format, changedMembers: members
                    )
                return FeedAnswers.computed(feed: id.name, from: since, latest: latest, batch: batch, full: full, changedMembers: members)
            }
        })
    }

    /// `found`'s answer, counted in the metrics as reused or computed.
    func counted(_ found: (answer: ComputedAnswer, reused: Bool)) -> ComputedAnswer {
        if found.reused {
            metrics.answersReused.increment()
        } else {
            metrics.answersComputed.increment()
        }
        return found.answer
    }

    /// The latest of feed `id`; when that is version `since`, the next one within `wait`.
    /// The long poll registers before it reads, so a version stored between the read and the
    /// wait still wakes it; it starts from the version the last long polls on the feed were
    /// woken with when that is not older than `since`, and is woken with the next one: a
    /// client following the feed reads nothing from the store.
    func latest(of id: FeedID, after since: Int, wait: Duration) async throws(FeedError) -> StoredSnapshot {
        guard wait > .zero, let (wake, known) = longPolls.register(on: id, since: since) else {
            guard let found = try await store.latest(of: id) else { throw .notFound(id) }
            return found
        }
        defer { longPolls.unregister(wake, from: id) }
        let found: StoredSnapshot
        if let known, known.snapshot.version >= since {
            found = known
        } else {
            guard let read = try await store.latest(of: id) else { throw .notFound(id) }
            found = read
        }
        guard found.snapshot.version == since else { return found }
        switch await wake.wait(upTo: wait) {
        case .latest(let latest): return latest
        case .deleted: throw .notFound(id)
        case .failed(let error): throw error
        case .expired: return found
        }
    }

    /// Version `since` of feed `id`, whose latest is `latest`: its collection, and its text
    /// when `withText` (else empty). Version 0 is the empty collection.
    private static func version(
        _ since: Int, of id: FeedID, latest: Snapshot, withText: Bool, in store: any FeedStore
    ) async throws(FeedError) -> (collection: JSONCollection, text: [UInt8]) {
        if since == 0 { return (Snapshot(emptyLike: latest.collection).collection, []) }
        if since == latest.version { return (latest.collection, latest.bytes) }
        if withText {
            guard let retained = try await store.snapshot(at: since, of: id) else { throw .versionGone(id, since: since, latest: latest.version) }
            return (retained.collection, retained.bytes)
        }
        guard let retained = try await store.collection(at: since, of: id) else { throw .versionGone(id, since: since, latest: latest.version) }
        return (retained, [])
    }

    /// Removes feed `id`; its parked long polls learn it (``FeedError/notFound(_:)``).
    public func delete(_ id: FeedID) async throws(FeedError) {
        rowOrders.drop(id)
        guard try await store.delete(id) else { throw .notFound(id) }
        answers.drop(id, olderThan: nil)
        longPolls.wakeAll(id, with: .deleted)
    }

    /// Every feed with its latest version, in id order: `{"feeds":[{"feed","version"}]}`.
    public func list(after: FeedID?, limit: Int) async throws(FeedError) -> [UInt8] {
        FeedAnswers.list(try await store.list(after: after, limit: limit))
    }

    /// The feeds whose ids `patterns` name (each an exact id, or a prefix), as ``list(after:limit:)``
    /// answers: each pattern's range of ids read from the store's index, merged.
    public func list(after: FeedID?, limit: Int, matching patterns: [(text: String, isPrefix: Bool)]) async throws(FeedError) -> [UInt8] {
        var found: [FeedID: FeedSummary] = [:]
        var more = false
        for pattern in patterns {
            if pattern.isPrefix {
                let page = try await store.list(after: after, prefix: pattern.text, limit: limit)
                for feed in page.feeds { found[feed.id] = feed }
                more = more || page.more
            } else if after.map({ $0.name.utf8.lexicographicallyPrecedes(pattern.text.utf8) }) ?? true {
                // An id is the first of the ids it begins.
                if let first = try await store.list(after: nil, prefix: pattern.text, limit: 1).feeds.first, first.id.name.utf8.elementsEqual(pattern.text.utf8) {
                    found[first.id] = first
                }
            }
        }
        let feeds = found.values.sorted { $0.id < $1.id }
        return FeedAnswers.list(FeedPage(feeds: Array(feeds.prefix(limit)), more: more || feeds.count > limit))
    }

    /// Whether the store answers now (readiness).
    public var isStoreAvailable: Bool { store.isAvailable }

    /// Answers every parked long poll now, and later ones at once (at shutdown).
    public func close() {
        longPolls.close()
    }

    /// What the feeds hold now.
    public var statistics: FeedStatistics {
        let stored = store.statistics
        return FeedStatistics(
            feeds: stored.feeds, versions: stored.versions, bytes: stored.bytesInMemory + answers.bytes + rowOrders.bytes,
            parkedLongPolls: longPolls.count
        )
    }

    /// Records the gauges of what the feeds hold (``statistics``) through swift-metrics; a
    /// metrics page calls it before it is read. Counters are recorded as things happen.
    public func recordGauges() {
        metrics.record(statistics)
    }

}

/// The answer to `changes`: its JSON (a bare JSON Patch array in that format, else an
/// object), shared with every client that asked the same, and the latest version it leads to.
public struct ChangesAnswer: Sendable {
    /// The answer, shared.
    public var answer: SharedAnswer
    /// The version it leads to.
    public var latest: Int
    /// The operations of its batch (0: the client's data, or window, is as at `latest`).
    public var operationCount: Int

    /// The answer's JSON.
    public var body: [UInt8] { answer.bytes }

    /// Whether the body is a JSON Patch (a reload past `maxChanges` is an object).
    public var isPatch: Bool { body.first == UInt8(ascii: "[") }
}

/// What a write stored, and its answer (`{"feed","version","changed", ...batch}`).
public struct FeedWrite: Sendable {
    /// The feed's latest version after the write.
    public var version: Int
    /// Whether the write made a new version.
    public var changed: Bool
    /// The answer's JSON.
    public var body: [UInt8]
    /// The bytes of the feed's latest text the write read or made (0 for a repeat answered
    /// from its `Idempotency-Key`): what its work was proportional to.
    public var textCount: Int
}

/// A feed's latest version; its answer's JSON is written only when first asked for (a
/// conditional GET that answers 304 needs only ``answerByteCount``), then kept for the
/// version and shared.
public struct FeedDocument: Sendable {
    let feed: FeedID
    let snapshot: Snapshot
    let answers: AnswerCache

    public var version: Int { snapshot.version }

    /// The answer's size in bytes, known without writing it.
    public var answerByteCount: Int { FeedAnswers.latestByteCount(feed: feed.name, snapshot: snapshot) }

    /// The answer, `{"feed","version","data"}`: one for every client of the version.
    public func answer() async throws(FeedError) -> SharedAnswer {
        let question = AnswerCache.Question(feed: feed, latest: snapshot.version, asked: .document)
        let (feed, snapshot) = (feed, snapshot)
        return try await answers.answer(question) { () async throws(FeedError) in
            await Workers.run { ComputedAnswer(FeedAnswers.latest(feed: feed.name, snapshot: snapshot)) }
        }.answer.full
    }
}

/// What the feeds hold.
public struct FeedStatistics: Sendable {
    public var feeds: Int
    /// Versions retained across feeds.
    public var versions: Int
    /// Bytes held in this process's memory, estimated: the store's and the answers kept.
    public var bytes: Int
    public var parkedLongPolls: Int
}
