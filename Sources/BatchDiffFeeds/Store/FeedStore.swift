import BatchDiffJSON

/// Where feeds live: their latest versions whole, and the versions before them as far as
/// they are retained.
///
/// The feed core reads and writes feeds only through this protocol, so nothing may assume
/// the feeds are in this process's memory: a store may wait for a disk or a database (each
/// call is `async` and the core never makes one on an HTTP server's threads), may fail
/// (throwing ``FeedError``), and may be shared by several processes, so that a new version
/// can appear that this process did not write. Writes are conditional for that reason:
/// ``append(_:to:settings:after:)`` stores a version only on top of the one it was made from.
/// A store keeps its own retention limits (versions per feed, bytes).
package protocol FeedStore: Sendable {
    /// The latest version of feed `id`, whole, or `nil` when there is no such feed.
    func latest(of id: FeedID) async throws(FeedError) -> StoredSnapshot?

    /// Version `version` of feed `id` as the differ reads it, or `nil` when that version is
    /// not retained (or the feed is gone).
    func collection(at version: Int, of id: FeedID) async throws(FeedError) -> JSONCollection?

    /// Version `version` of feed `id` whole, its JSON text included (the changed members of
    /// an item are read from it), or `nil` when that version is not retained.
    func snapshot(at version: Int, of id: FeedID) async throws(FeedError) -> Snapshot?

    /// The batches that made versions `since + 1` through `latest` of feed `id`, each from
    /// the version before, as kept with them (``JSONBatch/stored``), in version order; `nil`
    /// when `since` is not retained or one of them keeps none (written before stores kept
    /// batches). A window answer is seen through them (docs/feeds.md §5.3), in time
    /// proportional to what changed, never reading a whole version.
    func batches(of id: FeedID, after since: Int, through latest: Int) async throws(FeedError) -> [[UInt8]]?

    /// Stores `version` as the next version of feed `id` when the feed's latest version is
    /// still `previous` (its snapshot is numbered `previous + 1`); `previous` nil creates the
    /// feed, with `settings` and the snapshot's number as its first version, when it does
    /// not exist (a feed keeps the settings it was created with). Returns `false` and
    /// changes nothing when the feed moved on (or was created, or deleted) meanwhile.
    /// Retention may then drop old versions.
    /// The version's answer under an `Idempotency-Key`, if any, is stored with it, in the
    /// same step (a feed's first version carries none: a `PATCH` never creates a feed); a
    /// store may keep the version as its change from the one before, and keeps its batch
    /// from the one before (``NewVersion/storedBatch``) beside it.
    func append(_ version: NewVersion, to id: FeedID, settings: FeedSettings, after previous: Int?) async throws(FeedError) -> Bool

    /// The answer kept under `key` with one of feed `id`'s retained versions, if any.
    func keptAnswer(for key: String, of id: FeedID) async throws(FeedError) -> KeptAnswer?

    /// Keeps `answer` (of a write that made no version) with version `answer.version` of
    /// feed `id`, while that version is retained; nothing when it is not, or when the
    /// version already keeps ``KeptAnswer/unchangedPerVersion`` such answers.
    func keep(_ answer: KeptAnswer, for id: FeedID) async throws(FeedError)

    /// Removes feed `id`; returns whether it existed.
    func delete(_ id: FeedID) async throws(FeedError) -> Bool

    /// Up to `limit` feeds with ids above `after` (from the first when `nil`) that begin
    /// with `prefix`, with their latest versions, in id order, and whether more follow; from
    /// an index, by the range of ids the prefix spans, never by reading every feed.
    func list(after: FeedID?, prefix: String, limit: Int) async throws(FeedError) -> FeedPage

    /// Calls `observer` for every change of any feed other processes sharing the store make
    /// from now on (a new version, a deletion); it may be told of this process's own too. A
    /// store no other process writes calls it never. The core wakes the long polls of its
    /// own writes itself (``Feeds``), and those of other processes' through this.
    func observe(_ observer: @escaping @Sendable (FeedChange) -> Void)

    /// What the store holds, as far as this process knows it without waiting.
    var statistics: FeedStoreStatistics { get }

    /// Bytes the store holds in this process's memory, estimated; cheap, read on every write.
    var bytesInMemory: Int { get }

    /// Whether the store answers now, as far as this process knows without waiting (a
    /// database that is down or hangs: no); readiness (`/readyz`) follows it.
    var isAvailable: Bool { get }
}

extension FeedStore {
    /// A store that keeps no batches with its versions: windows are seen through the whole
    /// diff.
    package func batches(of id: FeedID, after since: Int, through latest: Int) async throws(FeedError) -> [[UInt8]]? { nil }

    /// Up to `limit` feeds with ids above `after`, whatever their prefix.
    package func list(after: FeedID?, limit: Int) async throws(FeedError) -> FeedPage {
        try await list(after: after, prefix: "", limit: limit)
    }

    /// A store that keeps every retained version's text reads it again.
    package func collection(at version: Int, of id: FeedID) async throws(FeedError) -> JSONCollection? {
        try await snapshot(at: version, of: id)?.collection
    }

    /// ``append(_:to:settings:after:)`` of a snapshot alone: nothing known of the version before.
    package func append(_ snapshot: Snapshot, to id: FeedID, settings: FeedSettings, after previous: Int?) async throws(FeedError) -> Bool {
        try await append(NewVersion(snapshot), to: id, settings: settings, after: previous)
    }

    /// A store inside this process (memory, a file of its own) is there while it runs.
    package var isAvailable: Bool { true }
}

/// What a feed keeps from its first write, in every store: how its items are read, and
/// what its writes are held to.
package struct FeedSettings: Sendable, Equatable {
    /// The member that holds an item's (and a section's) identity in this feed.
    package var idKey: String
    /// Whether every version must keep its identities unique (``JSONCollection/firstRepeatedIdentity(path:)``).
    package var uniqueIdentities: Bool
    /// The order every version holds its rows and sections in (empty: the order written).
    package var order: CollectionOrder

    /// Settings with the identity member `idKey`, when `uniqueIdentities` unique identities,
    /// and versions kept in `order`.
    package init(idKey: String = "id", uniqueIdentities: Bool = false, order: CollectionOrder = CollectionOrder()) {
        self.idKey = idKey
        self.uniqueIdentities = uniqueIdentities
        self.order = order
    }

    /// Settings as a store keeps them, the orders as they are written (`nil`: none); a
    /// written order that does not read is a store that fails.
    package init(stored idKey: String, uniqueIdentities: Bool, orderBy: String?, sectionOrderBy: String?) throws(FeedError) {
        do throws(SortOrderError) {
            let order = CollectionOrder(rows: try orderBy.map(SortOrder.init(parsing:)), sections: try sectionOrderBy.map(SortOrder.init(parsing:)))
            self.init(idKey: idKey, uniqueIdentities: uniqueIdentities, order: order)
        } catch {
            throw .internalFailure("a stored feed's order does not read: \(error)")
        }
    }
}

/// A write's answer kept under its `Idempotency-Key` with the version the write made (or
/// found, when it changed nothing), so that a repeat is answered the same, in every server.
package struct KeptAnswer: Sendable, Equatable {
    /// The key, up to 128 visible ASCII characters.
    package var key: String
    /// A checksum of the request (its body's text without whitespace), the same in every
    /// server: a repeat with another body is refused.
    package var request: UInt64
    /// The version the answer names.
    package var version: Int
    /// Whether the write made that version.
    package var changed: Bool
    /// The answer's JSON.
    package var body: [UInt8]

    /// The most answers of writes that changed nothing a version keeps: a client sending
    /// the same write under ever new keys must not grow the store without bound.
    package static let unchangedPerVersion = 64

    /// The answer `body` to a write under `key`, whose request's checksum is `request`,
    /// naming `version`, which it made when `changed`.
    package init(key: String, request: UInt64, version: Int, changed: Bool, body: [UInt8]) {
        self.key = key
        self.request = request
        self.version = version
        self.changed = changed
        self.body = body
    }
}

/// The latest version of a feed as a store keeps it.
package struct StoredSnapshot: Sendable {
    /// The feed's settings.
    package var settings: FeedSettings
    /// The version, whole; its `version` is the feed's latest.
    package var snapshot: Snapshot

    /// The latest version `snapshot` of a feed with `settings`.
    package init(settings: FeedSettings, snapshot: Snapshot) {
        self.settings = settings
        self.snapshot = snapshot
    }

    /// The member that holds an item's identity in this feed.
    package var idKey: String { settings.idKey }
}

/// A feed and its latest version, as listed.
package struct FeedSummary: Sendable, Equatable {
    package var id: FeedID
    package var version: Int

    package init(id: FeedID, version: Int) {
        self.id = id
        self.version = version
    }
}

/// A page of the listing of feeds.
package struct FeedPage: Sendable, Equatable {
    package var feeds: [FeedSummary]
    /// Whether feeds follow the last of `feeds`.
    package var more: Bool

    package init(feeds: [FeedSummary], more: Bool) {
        self.feeds = feeds
        self.more = more
    }
}

/// A change of one feed, as a store reports it to its observers.
package enum FeedChange: Sendable, Equatable {
    /// A new latest version.
    case appended(FeedID, version: Int)
    /// The feed was deleted.
    case deleted(FeedID)
    /// Changes may have been missed (the link to a shared store was lost or came back):
    /// any feed may have changed.
    case missed
}

/// What a store holds.
package struct FeedStoreStatistics: Sendable, Equatable {
    /// Feeds held.
    package var feeds: Int
    /// Versions retained across feeds, latest ones included.
    package var versions: Int
    /// Bytes the store holds in this process's memory, estimated.
    package var bytesInMemory: Int

    package init(feeds: Int, versions: Int, bytesInMemory: Int) {
        self.feeds = feeds
        self.versions = versions
        self.bytesInMemory = bytesInMemory
    }
}
