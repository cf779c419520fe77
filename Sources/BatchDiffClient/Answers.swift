import BatchDiff

/// `GET /feeds/{id}`: a feed's latest version, whole.
public struct FeedSnapshot<Header, Item> {
    public var feed: String
    public var version: Int
    public var data: FeedCollection<Header, Item>
}

extension FeedSnapshot: Sendable where Header: Sendable, Item: Sendable {}

extension FeedSnapshot: Decodable where Header: Decodable, Item: Decodable {}

/// `GET /feeds/{id}/changes?since=N`: what takes a client from version `from` to `to`.
///
/// Either a batch with the new content it needs (`values`), or, when the server found more
/// changes than the client's `maxChanges`, a reload with the whole latest collection (`data`).
public struct FeedChanges<Header, Item> {
    public var feed: String
    /// The client's version; 0 is the empty collection.
    public var from: Int
    /// The latest version.
    public var to: Int
    public var update: BatchUpdate
    /// With `changedMembers=true`, the members that changed in each reloaded row and updated
    /// section (a batch only).
    public var changedMembers: ChangedMemberNames?
    /// The new content of the batch's lists (a batch only). Of a `values=merge` answer, the
    /// inserted rows and sections only: the reloaded rows and updated headers are
    /// ``mergeEntries``, which ``applied(to:identity:)`` merges into what is held.
    public var values: BatchValues<Header, Item>?
    /// A `values=merge` answer's entries for `rows.reloaded` and `sections.updated`.
    public var mergeEntries: MergeEntries<Header, Item>?
    /// The whole collection at `to` (a reload only); a window's rows for a window's answer.
    public var data: FeedCollection<Header, Item>?
    /// A window's answer only (``FollowerConfiguration/window``): the rows of the whole
    /// collection, at `from` and at `to` (the batch's counts are the window's).
    public var total: RowTotals?
    /// A window's answer only: where the window starts in the collection at `to` (for one
    /// anchored on a row, just after it).
    public var offset: Int?
}

/// `GET /feeds/{id}?offset=&limit=`: a page of the latest collection (docs/feeds.md §4.1).
public struct FeedPage<Header, Item> {
    public var feed: String
    public var version: Int
    /// The rows (sections) of the whole collection.
    public var total: Int
    /// The page's first position.
    public var offset: Int
    /// The page's rows, or its sections, each whole.
    public var data: FeedCollection<Header, Item>
}

extension FeedPage: Sendable where Header: Sendable, Item: Sendable {}

extension FeedPage: Decodable where Header: Decodable, Item: Decodable {}

/// The rows of a whole collection before and after a window's answer.
public struct RowTotals: Decodable, Hashable, Sendable {
    public var old: Int
    public var new: Int
}

extension FeedChanges: Sendable where Header: Sendable, Item: Sendable {}

extension FeedChanges: Decodable where Header: Decodable, Item: Decodable {
    private enum Keys: String, CodingKey {
        case feed, from, to, values, data, rows, sections, total, offset
    }

    private enum ListKeys: String, CodingKey {
        case changedMembers
    }

    public init(from decoder: any Decoder) throws {
        let answer = try decoder.container(keyedBy: Keys.self)
        feed = try answer.decode(String.self, forKey: .feed)
        from = try answer.decode(Int.self, forKey: .from)
        to = try answer.decode(Int.self, forKey: .to)
        total = try answer.decodeIfPresent(RowTotals.self, forKey: .total)
        offset = try answer.decodeIfPresent(Int.self, forKey: .offset)
        update = try BatchUpdate(from: decoder)
        if case .reload = update {
            data = try answer.decode(FeedCollection.self, forKey: .data)
        } else {
            let wire = try answer.decode(WireValues<Header, Item>.self, forKey: .values)
            values = wire.values
            mergeEntries = wire.mergeEntries
            let rows = try answer.nestedContainer(keyedBy: ListKeys.self, forKey: .rows)
            if let names = try rows.decodeIfPresent([[String]?].self, forKey: .changedMembers) {
                let sections = try? answer.nestedContainer(keyedBy: ListKeys.self, forKey: .sections)
                changedMembers = ChangedMemberNames(
                    rows: names, sections: try sections?.decodeIfPresent([[String]?].self, forKey: .changedMembers) ?? []
                )
            }
        }
    }
}

/// The members that changed (docs/batch-format.md §6): a client rebinds only those fields.
public struct ChangedMemberNames: Hashable, Sendable {
    /// Aligned with `rows.reloaded`: the names of the members whose values changed, or `nil`
    /// when the old or the new item is not an object (rebind it all).
    public var rows: [[String]?]
    /// Aligned with `sections.updated`, likewise for section headers.
    public var sections: [[String]?]
}

/// The answer to `PUT /feeds/{id}`: the version stored and the batch from the one before.
public struct FeedWriteResult: Decodable, Sendable {
    public var feed: String
    public var version: Int
    /// Whether the write made a new version (not when the snapshot equals the latest).
    public var changed: Bool
    public var update: BatchUpdate

    private enum Keys: String, CodingKey {
        case feed, version, changed
    }

    public init(from decoder: any Decoder) throws {
        let answer = try decoder.container(keyedBy: Keys.self)
        feed = try answer.decode(String.self, forKey: .feed)
        version = try answer.decode(Int.self, forKey: .version)
        changed = try answer.decode(Bool.self, forKey: .changed)
        update = try BatchUpdate(from: decoder)
    }
}

/// An RFC 9457 problem document, as every error answer carries (docs/errors.md).
public struct ProblemDocument: Decodable, Sendable, Hashable, Error, CustomStringConvertible {
    /// `urn:batchdiff:<code>`.
    public var type: String
    public var title: String
    public var status: Int
    public var detail: String
    /// The stable snake_case code, e.g. `version_gone`.
    public var code: String
    /// On 410 `version_gone`, the feed's latest version.
    public var latest: Int?

    public var description: String { "\(status) \(code): \(detail)" }
}

/// `values` of a `changes` answer: whole, or led by `"form": "merge"`.
private struct WireValues<Header, Item> {
    var values: BatchValues<Header, Item>
    var mergeEntries: MergeEntries<Header, Item>?
}

extension WireValues: Decodable where Header: Decodable, Item: Decodable {
    private enum Keys: String, CodingKey {
        case form, rows, sections
    }

    private enum ListKeys: String, CodingKey {
        case inserted, reloaded, updated
    }

    init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: Keys.self)
        let merging = try values.decodeIfPresent(String.self, forKey: .form) == FeedValues.merge.rawValue
        let rows = try values.nestedContainer(keyedBy: ListKeys.self, forKey: .rows)
        self.values = BatchValues(insertedRows: try rows.decodeIfPresent([Item].self, forKey: .inserted) ?? [])
        if merging {
            mergeEntries = MergeEntries(rows: try rows.decodeIfPresent([MergeEntry<Item>].self, forKey: .reloaded) ?? [], headers: [])
        } else {
            self.values.reloadedRows = try rows.decodeIfPresent([Item].self, forKey: .reloaded) ?? []
        }
        guard values.contains(.sections) else { return }
        let sections = try values.nestedContainer(keyedBy: ListKeys.self, forKey: .sections)
        self.values.insertedSections = (try sections.decodeIfPresent([DecodedSection<Header, Item>].self, forKey: .inserted) ?? []).map(\.section)
        if merging {
            mergeEntries?.headers = (try sections.decodeIfPresent([MergeEntry<SectionHeader<Header>>].self, forKey: .updated) ?? []).map { entry in
                switch entry {
                case .merge(let patch): .merge(patch)
                case .item(let header): .item(header.header)
                }
            }
        } else {
            self.values.updatedHeaders = (try sections.decodeIfPresent([SectionHeader<Header>].self, forKey: .updated) ?? []).map(\.header)
        }
    }
}
