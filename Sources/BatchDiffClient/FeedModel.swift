#if canImport(Observation)
import Observation

/// A followed feed, or a window of one, for SwiftUI: its rows, each with a stable identity,
/// so that `List` and `ForEach` animate inserts, deletes and moves by themselves. Observed
/// through the Observation module: a view that reads ``rows`` (or ``sections``) is redrawn
/// when a new version changes them.
///
/// SwiftUI needs identities unique (a `ForEach` over repeated ids shows wrong rows): a feed
/// it shows should be created with `uniqueIdentities=true` (docs/feeds.md §3), so that a
/// write that repeats one is refused.
///
/// ```swift
/// struct Timeline: View {
///     @State private var model = FeedModel<JSON, Post, Int>(
///         FollowerConfiguration(serverURL: "https://feeds.example.com", feed: "timeline", transport: URLSessionTransport())
///     ) { $0.id }
///
///     var body: some View {
///         List(model.rows) { row in PostRow(post: row.item) }
///             .task { await model.follow() }
///     }
/// }
/// ```
@available(iOS 17, macOS 14, *)
@MainActor
@Observable
public final class FeedModel<Header: Decodable & Sendable, Item: Decodable & Sendable, Identity: Hashable & Sendable> {
    /// The rows shown: a list's, or every section's one after the other.
    public private(set) var rows: [FeedRow<Item, Identity>] = []
    /// A sectioned feed's sections, each with its rows (none for a list).
    public private(set) var sections: [FeedSection<Header, Item, Identity>] = []
    /// The version shown; 0 before the first.
    public private(set) var version = 0
    /// Following a window: the rows (sections) of the whole collection.
    public private(set) var total: Int?
    /// Why following ended, when it did (a token refused, a feed id the server refuses).
    public private(set) var failure: (any Error)?

    @ObservationIgnored private let configuration: FollowerConfiguration
    @ObservationIgnored private let identity: @Sendable (Item) -> Identity
    /// What is shown, to follow on from when following starts again.
    @ObservationIgnored private var shown: (version: Int, collection: FeedCollection<Header, Item>)?

    /// A model of feed `configuration.feed` (or of its `window`), empty until ``follow()``
    /// runs; `identity` says what makes two items the same row.
    public init(_ configuration: FollowerConfiguration, identity: @escaping @Sendable (Item) -> Identity) {
        self.configuration = configuration
        self.identity = identity
    }

    /// Follows the feed, showing each version as it comes, until the calling task is
    /// cancelled (a view's `.task { await model.follow() }` ends with the view) or the
    /// follower ends with an error, kept in ``failure``. Called again (the view shown
    /// again), it goes on from the version shown, not from nothing.
    public func follow() async {
        failure = nil
        do {
            for try await update in FeedFollower(configuration, from: configuration.window == nil ? shown : nil, identity: identity) { show(update) }
        } catch {
            failure = error
        }
    }

    /// Shows `update`'s collection.
    private func show(_ update: FeedUpdate<Header, Item>) {
        let identity = self.identity
        switch update.collection {
        case .list(let items):
            rows = items.map { FeedRow(id: identity($0), item: $0) }
            sections = []
        case .sectioned(let shown):
            let idKey = configuration.idKey
            sections = shown.enumerated().map { index, section in
                FeedSection(
                    id: FeedCollection<Header, Item>.sectionIdentity(of: section.header, idKey: idKey) ?? AnyHashable(index), header: section.header,
                    rows: section.items.map { FeedRow(id: identity($0), item: $0) }
                )
            }
            rows = sections.flatMap(\.rows)
        }
        version = update.version
        total = update.total
        shown = (update.version, update.collection)
    }
}

/// A row of a ``FeedModel``: the item and its identity.
public struct FeedRow<Item, Identity: Hashable>: Identifiable {
    public let id: Identity
    public let item: Item
}

extension FeedRow: Sendable where Item: Sendable, Identity: Sendable {}
extension FeedRow: Equatable where Item: Equatable {}

/// A section of a ``FeedModel``: its header, its rows, and an identity from its header
/// (a ``JSON`` header's ``FollowerConfiguration/idKey`` member, an `Identifiable` header's
/// `id`, a `Hashable` header itself; else its position).
public struct FeedSection<Header, Item, Identity: Hashable>: Identifiable {
    public let id: AnyHashable
    public let header: Header
    public let rows: [FeedRow<Item, Identity>]
}
#endif
