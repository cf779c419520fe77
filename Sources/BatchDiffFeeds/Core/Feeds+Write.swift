import BatchDiff
import BatchDiffJSON

/// Writes of whole snapshots (`PUT`): read on a worker, in the feed's turn, compared with
/// the latest, diffed, stored with the answers their clients ask next, and their long polls
/// woken with the version.
extension Feeds {
    /// Stores the JSON `text` as the next version of feed `id` unless it equals the latest;
    /// creates the feed (with the identity member `idKey`, default `id`, `uniqueIdentities`,
    /// default false, and the orders of its rows and sections, default none) when it is new,
    /// its first version starting a new series (``VersionSeries``). A write that names a
    /// setting must name the feed's. A sorted feed's version holds its rows and sections in
    /// its order, however the text lists them.
    /// A feed with unique identities refuses a snapshot that repeats one
    /// (``FeedError/duplicateIdentity(_:)``). Writes to one feed take turns in the order they
    /// call (``WriteTurns``); the text is read in the write's turn, on a worker. The answer's
    /// batch is as `options` ask for it.
    package func write(
        _ text: [UInt8], to id: FeedID, idKey requested: String?, uniqueIdentities: Bool? = nil,
        order: (rows: SortOrder?, sections: SortOrder?) = (nil, nil), condition: WriteCondition, options: AnswerOptions = AnswerOptions()
    ) async throws(FeedError) -> FeedWrite {
        try await turns.inTurn(for: id) { () async throws(FeedError) -> FeedWrite in
            // Read with the identity member the write names, else the feed's: read again only
            // when they differ (an error answer) or another process changed the feed meanwhile.
            let stored = try await store.latest(of: id)
            let readWith = requested ?? stored?.idKey ?? "id"
            let document = try await Workers.run { () throws(FeedError) in try Snapshot.document(text, idKey: readWith, asWritten: true) }
            return try await write(
                (document, readWith), over: stored, to: id, requested: FeedSettingsRequest(idKey: requested, uniqueIdentities: uniqueIdentities, order: order),
                condition: condition, options: options
            )
        }
    }

    /// ``write(_:to:idKey:uniqueIdentities:order:condition:options:)`` of a text read over
    /// `first`, the feed's latest as read before: a store shared with other processes may
    /// still move on meanwhile, and the write then tries again from the new latest.
    /// `requested` holds the settings the write names.
    func write(
        _ read: (document: JSONDocument, idKey: String), over first: StoredSnapshot?, to id: FeedID,
        requested: FeedSettingsRequest, condition: WriteCondition, options: AnswerOptions
    ) async throws(FeedError) -> FeedWrite {
        var parsed: (settings: FeedSettings, snapshot: Snapshot)?
        var stored = first
        while true {
            guard stored != nil || condition.holds(forLatest: nil) else { throw .conditionFailed(id, latest: nil) }
            let settings = stored?.settings ?? requested.newFeed
            try requested.check(against: settings, of: id)
            let idKey = settings.idKey
            if parsed?.settings != settings {
                parsed = (settings, try await Workers.run { () throws(FeedError) in
                    // (Read again with the feed's idKey: its members were checked the first time.)
                    let document = read.idKey == idKey ? read.document : try Snapshot.document(read.document.bytes, idKey: idKey)
                    return try Snapshot(document: document, idKey: idKey).sorted(settings.order, idKey: idKey)
                })
            }
            if let write = try await commit(parsed!.snapshot, over: stored, to: id, settings: settings, condition: condition, options: options) {
                return write
            }
            stored = try await store.latest(of: id)
        }
    }

    /// Stores `snapshot` as the version after `stored` (feed `id`'s latest as just read;
    /// `nil` creates the feed with `settings`) when `condition` holds, it keeps the feed's
    /// rules and it differs from `stored`; its answer as `options` ask for it. `nil` when the
    /// store moved on meanwhile (another process wrote): the caller tries again. With
    /// `keeping` (an `Idempotency-Key` and the request's checksum), the answer is kept with
    /// the version it names.
    func commit(
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
        let followers = followingValues(of: id, at: base.version)
        let made = try await Workers.run { () throws(FeedError) in
            try Self.answers(writing: next, over: base, to: id, options: options, answering: followers)
        }
        let kept = key.map { KeptAnswer(key: $0.key, request: $0.request, version: next.version, changed: true, body: made.write) }
        let version = NewVersion(next, base: stored?.snapshot, origins: made.origins, batch: made.batch, keeping: kept)
        guard try await append(version, answering: made.changes, since: base.version, to: id, settings: settings, after: previous) else { return nil }
        if rowOrders.drop(id) { await keepRowOrder(of: next, for: id) }
        return FeedWrite(version: next.version, changed: true, body: made.write, textCount: next.textCount)
    }

    /// The answer to a write that leaves feed `id`'s latest version `stored` as it is:
    /// `batch`, which changes nothing; kept under `key`, when given, with that version.
    func unchanged(
        _ stored: StoredSnapshot, batch: JSONBatch, to id: FeedID, options: AnswerOptions, keeping key: (key: String, request: UInt64)?
    ) async throws(FeedError) -> FeedWrite {
        let latest = stored.snapshot
        let members = options.changedMembers
            ? try Self.changedMembers(of: batch, from: (latest.collection, latest.bytes), to: latest, options: options) : nil
        let body = try FeedAnswers.write(feed: id.name, version: latest.version, changed: false, batch: batch, options: options, changedMembers: members)
        if let key { try await store.keep(KeptAnswer(key: key.key, request: key.request, version: latest.version, changed: false, body: body), for: id) }
        return FeedWrite(version: latest.version, changed: false, body: body, textCount: latest.textCount)
    }

    /// Stores `version` as the next of feed `id` (created with `settings` when `previous`
    /// is `nil`), keeps the answers `kept`, its batch for clients at version `since` with each form
    /// of values, for them, then wakes the long polls on the feed with the version; `false`
    /// when the store moved on meanwhile. Room for it is made by dropping the answers kept
    /// first.
    func append(
        _ version: NewVersion, answering kept: [FollowersAnswer], since: Int, to id: FeedID, settings: FeedSettings, after previous: Int?
    ) async throws(FeedError) -> Bool {
        let next = version.snapshot
        if answers.bytes + rowOrders.bytes + store.bytesInMemory + next.byteEstimate > maxBytes { answers.removeAll() }
        guard try await store.append(version, to: id, settings: settings, after: previous) else { return false }
        series.saw(next.version)
        answers.drop(id, olderThan: next.version)
        for made in kept {
            metrics.answersComputed.increment()
            let asked = AnswerCache.Asked.changes(since: since, options: AnswerOptions(values: made.values))
            answers.keep(made.answer, for: AnswerCache.Question(feed: id, latest: next.version, asked: asked))
        }
        longPolls.wake(id, with: StoredSnapshot(settings: settings, snapshot: next))
        return true
    }

    /// Keeps the rows of `snapshot`, feed `id`'s new latest written whole, for the windows,
    /// pages and patches that follow, which would otherwise each read it whole first (a
    /// window asked right after a `PUT` cost the whole collection): the write has read every
    /// row already. Only for a feed whose rows were kept before, as windows, pages and
    /// patches keep them: a feed only ever written whole and read whole never pays for it.
    func keepRowOrder(of snapshot: Snapshot, for id: FeedID) async {
        guard let rows = await Workers.run({ try? PatchRows(of: snapshot) }), rows.isWorthKeeping else { return }
        metrics.rowsReadWhole[.write]?.increment()
        rowOrders.keep(rows, for: id, version: snapshot.version)
    }

    /// The forms of values the clients following feed `id` at `version`, its latest, are
    /// answered with: none when nobody follows it; whole values when clients do (a long poll
    /// or event stream waits on it, or a client asked about that version), and merge values
    /// too once one asked with them. A write makes their answers with it; a feed nobody
    /// follows (most of a million per-user feeds) keeps none.
    func followingValues(of id: FeedID, at version: Int) -> [AnswerOptions.Values] {
        guard longPolls.areParked(on: id) || answers.wasAsked(id, atLatest: version) else { return [] }
        return answers.wasAskedMerge(id, atLatest: version) ? [.whole, .merge] : [.whole]
    }

    /// The answer to the write of `latest` (numbered) over `base`, as `options` ask for
    /// it, the answers for clients at `base` with each form of values `followers` ask (they
    /// ask next, most without other options), the row of `base` each row of `latest` is
    /// unchanged from, and the batch from `base` as stores keep it (``NewVersion``).
    static func answers(
        writing latest: Snapshot, over base: Snapshot, to id: FeedID, options: AnswerOptions, answering followers: [AnswerOptions.Values]
    ) throws(FeedError) -> (write: [UInt8], changes: [FollowersAnswer], origins: [Int?], batch: [UInt8]) {
        guard base.collection.shapeName == latest.collection.shapeName else {
            throw .invalidSnapshot("feed \(id) holds \(base.collection.shapeName); this snapshot is \(latest.collection.shapeName)")
        }
        let batch = try batch(from: base.collection, to: latest.collection)
        // The values' texts are read once (the batch placed once) for every form followers ask.
        let texts = followers.isEmpty
            ? nil : try FeedAnswers.values(of: batch, from: latest, mergingFrom: followers.contains(.merge) ? (base.collection, base.bytes) : nil)
        let changes = try texts.map { texts throws(FeedError) in
            try FollowersAnswer.answers(for: followers, feed: id.name, from: base.version, latest: latest, batch: batch) { _ in texts }
        } ?? []
        let changed = try changedMembers(of: batch, from: (base.collection, base.bytes), to: latest, options: options)
        let write = try FeedAnswers.write(feed: id.name, version: latest.version, changed: true, batch: batch, options: options, changedMembers: changed)
        // Only over a stored version (a new feed's base is the empty collection); without
        // them, a store keeps the version whole.
        let origins = base.version == 0 ? [] : (try? batch.unchangedRowOrigins()) ?? []
        return (write, changes, origins, base.version == 0 ? [] : batch.stored)
    }

    /// The changed members of `batch` from `old` (a collection and the text it was read
    /// from) to `new`, when `options` ask for them and the batch is not answered as a reload.
    static func changedMembers(
        of batch: JSONBatch, from old: (collection: JSONCollection, text: [UInt8]), to new: Snapshot, options: AnswerOptions
    ) throws(FeedError) -> ChangedMembers? {
        guard options.changedMembers, !options.reloads(batch) else { return nil }
        do {
            return try ChangedMembers(of: batch, old: old.collection, oldText: old.text, new: new.collection, newText: new.bytes)
        } catch {
            throw .internalFailure("the changed members of a batch: \(error)")
        }
    }

    static func batch(from old: JSONCollection, to new: JSONCollection) throws(FeedError) -> JSONBatch {
        do {
            return try JSONBatch(from: old, to: new, options: DiffOptions())
        } catch {
            throw .internalFailure("a feed's versions of different shapes: \(error)")
        }
    }
}

/// An answer a write makes for the clients one version behind, with one form of values.
struct FollowersAnswer: Sendable {
    let values: AnswerOptions.Values
    let answer: ComputedAnswer

    /// The answers for the clients at version `from` of the write of `latest`, one for each
    /// form of values `followers` ask, each written from the texts `texts` gives for it.
    static func answers(
        for followers: [AnswerOptions.Values], feed: String, from: Int, latest: Snapshot, batch: JSONBatch,
        texts: (AnswerOptions.Values) throws(FeedError) -> ValueTexts
    ) throws(FeedError) -> [FollowersAnswer] {
        var answers: [FollowersAnswer] = []
        for values in followers {
            var written = try texts(values)
            if values == .whole { written.merge = nil }
            let full = try FeedAnswers.changes(feed: feed, from: from, to: latest.version, batch: batch, values: written)
            answers.append(FollowersAnswer(values: values, answer: FeedAnswers.computed(
                feed: feed, from: from, latest: latest, batch: batch, full: full, merge: written.merge
            )))
        }
        return answers
    }
}
