import BatchDiffJSON

/// Ranges of versions: the batch from one retained version to another, not only to the
/// latest (docs/feeds.md §5.4). The same range is always the same answer, byte for byte (the
/// differ's, never a batch a patch made), on every server, so caches in front keep it for good.
extension Feeds {
    /// The batch from version `since` of feed `id` to version `to` (at most the latest, both
    /// retained, `since` at most `to`), as `options` ask for it.
    /// ``FeedError/versionGone(_:since:latest:)`` names the version that is not retained
    /// (`to` past the latest is not retained either).
    package func changes(of id: FeedID, since: Int, to: Int, options: AnswerOptions = AnswerOptions()) async throws(FeedError) -> ChangesAnswer {
        guard let stored = try await store.latest(of: id) else { throw .notFound(id) }
        let latest = stored.snapshot.version
        guard to <= latest else { throw .versionGone(id, since: to, latest: latest) }
        let target: StoredSnapshot
        if to == latest {
            target = stored
        } else {
            guard let snapshot = try await store.snapshot(at: to, of: id) else { throw .versionGone(id, since: to, latest: latest) }
            target = StoredSnapshot(settings: stored.settings, snapshot: snapshot)
        }
        let answer: ComputedAnswer
        do throws(FeedError) {
            answer = try await changes(of: id, since: since, latest: target, options: options, isRange: true)
        } catch .versionGone {
            // Named with the feed's latest, where a client starts again.
            throw .versionGone(id, since: since, latest: latest)
        }
        return ChangesAnswer(answer: answer.answer(maxChanges: options.maxChanges), latest: to, operationCount: answer.operationCount)
    }
}
