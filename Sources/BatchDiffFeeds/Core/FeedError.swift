import BatchDiffJSON

/// Why a feed operation failed. The feed core speaks only in these; the endpoints turn each
/// into a status and a problem document, in one place (docs/errors.md §3).
package enum FeedError: Error, Sendable, Equatable {
    /// A name that is not a feed id.
    case invalidFeedID(String)
    /// No feed of that id.
    case notFound(FeedID)
    /// `since` names a version this feed no longer retains, of an earlier series (before a
    /// deletion or a restart), or newer than the latest (docs/feeds.md §2).
    case versionGone(FeedID, since: Int, latest: Int)
    /// The write's ``WriteCondition`` does not hold; `latest` is `nil` when the feed does
    /// not exist.
    case conditionFailed(FeedID, latest: Int?)
    /// The snapshot is not JSON.
    case malformedJSON(JSONSyntaxError)
    /// The snapshot is not a collection, or not of the feed's shape or settings.
    case invalidSnapshot(String)
    /// The snapshot repeats an identity in a feed that keeps them unique: where.
    case duplicateIdentity(String)
    /// A row (section) of a sorted feed whose key holds what does not sort: which, and why.
    case invalidSortKey(String)
    /// A page's cursor (`after`) names a row (a section) the feed's latest version lacks.
    case cursorGone(FeedID, cursor: String)
    /// A window's anchor (`after`) names a row (a section) gone from the feed's latest
    /// version (`inVersion` nil), or one the client's version `inVersion` lacks.
    case anchorGone(FeedID, anchor: String, inVersion: Int?)
    /// A patch's op cannot be applied; nothing was changed.
    case patchRefused(PatchRefusal)
    /// An `Idempotency-Key` this feed has kept an answer under came with another body.
    case idempotencyKeyReused(FeedID, key: String)
    /// A snapshot (of a new feed or an existing one) that would not fit in the memory feeds
    /// may hold, even with every feed cut down to its latest version; nothing was stored or
    /// evicted.
    case storageFull(FeedID, limit: Int)
    /// The store cannot be reached (a database down or not answering in time); what it
    /// holds is unknown, so nothing is answered from what was last seen.
    case storeUnavailable(String)
    /// A feed a source keeps (``FeedSource``): clients do not write it.
    case sourced(FeedID)
    /// The source of a feed not made yet cannot be reached (why).
    case sourceUnavailable(String)
    /// A bug: nothing was changed.
    case internalFailure(String)
}
