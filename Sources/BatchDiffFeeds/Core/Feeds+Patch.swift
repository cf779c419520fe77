import BatchDiff
import BatchDiffJSON

/// Writes by identity (`PATCH`): ops applied to the rows the last patch left, in time
/// proportional to what they name.
extension Feeds {
    /// Changes feed `id` by the ops of the JSON text `body` (``FeedPatch``), as one new
    /// version unless they leave it as it was: ``FeedError/notFound(_:)`` for a feed that
    /// does not exist, ``FeedError/patchRefused(_:)`` for an op that cannot be applied
    /// (nothing changes). It takes its turn as a `PUT` does, and is answered as one. Under an
    /// `idempotencyKey`, the answer is kept with the version in the store, and a repeat of
    /// the key with the same body gets it again and changes nothing
    /// (``FeedError/idempotencyKeyReused(_:key:)`` with another body).
    package func patch(
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
    func patched(
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
        let followers = followingValues(of: id, at: base.version)
        let (next, made) = try await Workers.run { () throws(FeedError) in
            var next = Snapshot(patching: base, by: change.forward, textCount: change.textCount, idKey: stored.idKey).numbered(base.version + 1)
            if !ChangeChain.latest.keepsChange(chainBytes: next.chainBytes, textCount: next.textCount) { next = next.written }
            let members = options.changedMembers
                ? try Self.changedMembers(of: change.batch, from: (base.collection, base.bytes), to: next, options: options) : nil
            let write = try FeedAnswers.write(
                feed: id.name, version: next.version, changed: true, batch: change.batch, options: options, changedMembers: members
            )
            let changes = try FollowersAnswer.answers(for: followers, feed: id.name, from: base.version, latest: next, batch: change.batch) { values in
                values == .merge ? change.values.mergedFromPatch : change.values
            }
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
}
