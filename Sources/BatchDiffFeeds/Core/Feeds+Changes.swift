import BatchDiff
import BatchDiffJSON

/// Reads: a feed's latest version, and the batch from any retained version to it, kept and
/// shared, waiting for the next version when the client is at the latest (long polls).
extension Feeds {
    /// The latest version of feed `id` and its answer, `{"feed","version","data"}`.
    package func latest(of id: FeedID) async throws(FeedError) -> FeedDocument {
        guard let stored = try await store.latest(of: id) else { throw .notFound(id) }
        return FeedDocument(feed: id, snapshot: stored.snapshot, answers: answers)
    }

    /// The batch from version `since` of feed `id` to its latest, with the values, as
    /// `options` ask for it. A client at the latest waits up to `wait` for the next version
    /// (a long poll). Clients that differ only in `maxChanges` share one computation.
    package func changes(
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
            ? .range(since: since, options.computed) : .changes(since: since, options: options)
        let question = AnswerCache.Question(feed: id, latest: latest.version, asked: asked)
        // Computed as the question asks, `maxChanges` aside: the answer serves every client
        // of the question, whatever `maxChanges` each sends (the first one's must not leave
        // out the changed members the others get).
        let computed = options.computed
        return counted(try await answers.answer(question) { [store] () async throws(FeedError) -> ComputedAnswer in
            let withText = options.changedMembers || options.format == .jsonPatch || options.values == .merge
            let old = try await Self.version(since, of: id, latest: latest, withText: withText, in: store)
            return try await Workers.run { () throws(FeedError) in
                let batch = try Self.batch(from: old.collection, to: latest.collection)
                let members = options.format == .jsonPatch ? nil : try Self.changedMembers(of: batch, from: old, to: latest, options: computed)
                let values = options.values == .merge ? try FeedAnswers.values(of: batch, from: latest, mergingFrom: old) : nil
                let full = options.format == .jsonPatch
                    ? try FeedAnswers.patch(batch, from: old, to: latest, idKey: idKey)
                    : try FeedAnswers.changes(
                        feed: id.name, from: since, latest: latest, batch: batch, format: options.format, changedMembers: members, values: values
                    )
                return FeedAnswers.computed(
                    feed: id.name, from: since, latest: latest, batch: batch, full: full,
                    mediaType: options.format == .jsonPatch ? .jsonPatch : .json, changedMembers: members, merge: values?.merge
                )
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
    static func version(
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
}
