/// What a diffable data source's snapshot offers (`NSDiffableDataSourceSnapshot`), in its
/// own names: sections and items by identifier, each identifier unique in the snapshot. UIKit's
/// snapshot conforms (UIKitDiffableDataSource.swift); tests use a double that keeps its rules.
///
/// The adapter (``apply(_:to:identifiers:rebuilding:)``) changes a snapshot by the batch the
/// server sent, operation by operation: the snapshot's operations are what changed (no diff
/// on the phone; reading the identifiers and checking them walks the collection once).
public protocol DiffableSnapshot {
    associatedtype SectionIdentifierType: Hashable
    associatedtype ItemIdentifierType: Hashable

    /// The sections, in order.
    var sectionIdentifiers: [SectionIdentifierType] { get }
    /// The items of section `identifier`, in order.
    func itemIdentifiers(inSection identifier: SectionIdentifierType) -> [ItemIdentifierType]

    mutating func appendSections(_ identifiers: [SectionIdentifierType])
    mutating func insertSections(_ identifiers: [SectionIdentifierType], beforeSection toIdentifier: SectionIdentifierType)
    mutating func insertSections(_ identifiers: [SectionIdentifierType], afterSection toIdentifier: SectionIdentifierType)
    mutating func deleteSections(_ identifiers: [SectionIdentifierType])
    mutating func moveSection(_ identifier: SectionIdentifierType, beforeSection toIdentifier: SectionIdentifierType)
    mutating func moveSection(_ identifier: SectionIdentifierType, afterSection toIdentifier: SectionIdentifierType)

    mutating func appendItems(_ identifiers: [ItemIdentifierType], toSection sectionIdentifier: SectionIdentifierType?)
    mutating func insertItems(_ identifiers: [ItemIdentifierType], beforeItem beforeIdentifier: ItemIdentifierType)
    mutating func insertItems(_ identifiers: [ItemIdentifierType], afterItem afterIdentifier: ItemIdentifierType)
    mutating func deleteItems(_ identifiers: [ItemIdentifierType])
    mutating func deleteAllItems()
    mutating func moveItem(_ identifier: ItemIdentifierType, beforeItem toIdentifier: ItemIdentifierType)
    mutating func moveItem(_ identifier: ItemIdentifierType, afterItem toIdentifier: ItemIdentifierType)
    /// Marks items whose content changed: their cells are updated in place (iOS 15).
    mutating func reconfigureItems(_ identifiers: [ItemIdentifierType])
    /// Marks items whose cells must be rebuilt.
    mutating func reloadItems(_ identifiers: [ItemIdentifierType])
}

/// A diffable data source (`UITableViewDiffableDataSource`, `UICollectionViewDiffableDataSource`):
/// the snapshot it shows, and a new one to show, animated. UIKit's conform
/// (UIKitDiffableDataSource.swift).
@MainActor
public protocol DiffableDataSource: AnyObject {
    associatedtype Snapshot: DiffableSnapshot

    /// The snapshot shown now.
    func snapshot() -> Snapshot
    /// Shows `snapshot`, animating the differences from the one shown when asked.
    func applySnapshot(_ snapshot: Snapshot, animatingDifferences: Bool)
}

/// How a feed's rows and sections are named in a snapshot: the identifiers are the feed's
/// identities (for ``JSON`` items, ``JSON/identity(idKey:)``). Diffable data sources need them
/// unique: a feed they show should be created with `uniqueIdentities=true` (docs/feeds.md
/// §3), and the adapter checks each collection before it applies it.
public struct DiffableIdentifiers<Header, Item, SectionID: Hashable, ItemID: Hashable> {
    /// The one section a list feed is shown in.
    public var listSection: SectionID
    /// A section's identifier, from its header.
    public var section: (Header) -> SectionID
    /// A row's identifier.
    public var item: (Item) -> ItemID

    public init(listSection: SectionID, section: @escaping (Header) -> SectionID, item: @escaping (Item) -> ItemID) {
        self.listSection = listSection
        self.section = section
        self.item = item
    }

    /// `collection`'s sections (a list's one) and each one's items, by identifier.
    func identifiers(of collection: FeedCollection<Header, Item>) -> [(section: SectionID, items: [ItemID])] {
        switch collection {
        case .list(let items): [(listSection, items.map(item))]
        case .sectioned(let sections): sections.map { (section($0.header), $0.items.map(item)) }
        }
    }
}

extension DiffableIdentifiers where Header == JSON, Item == JSON, SectionID == JSON, ItemID == JSON {
    /// JSON rows and sections named by their identities (`idKey`, docs/batch-format.md §1.2);
    /// a list's one section is named `null`.
    public init(idKey: String = "id") {
        self.init(listSection: .null, section: { $0.identity(idKey: idKey) }, item: { $0.identity(idKey: idKey) })
    }
}

/// Why a snapshot cannot show a collection: two rows (or sections) of one identity.
public struct RepeatedIdentifierError: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String
}
