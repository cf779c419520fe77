import BatchDiff

/// What a client does with one answer: a batch to animate, or a reload when the server
/// found more changes than the client's `maxChanges` (docs/batch-format.md §2, §6).
public enum BatchUpdate: Hashable, Sendable {
    /// The batch between two lists.
    case list(ListBatch)
    /// The batch between two sectioned collections.
    case sectioned(SectionedBatch)
    /// Too many changes to animate: show the new collection with `reloadData()`. The
    /// counts are rows per section (one entry for a list), before and after.
    case reload(oldCounts: [Int], newCounts: [Int])

    /// Rows per section before the update (one entry for a list).
    public var oldCounts: [Int] {
        switch self {
        case .list(let batch): [batch.oldCount]
        case .sectioned(let batch): batch.oldCounts
        case .reload(let counts, _): counts
        }
    }

    /// Rows per section after the update (one entry for a list).
    public var newCounts: [Int] {
        switch self {
        case .list(let batch): [batch.newCount]
        case .sectioned(let batch): batch.newCounts
        case .reload(_, let counts): counts
        }
    }

    /// Whether the update changes nothing.
    public var isEmpty: Bool {
        switch self {
        case .list(let batch): batch.isEmpty
        case .sectioned(let batch): batch.isEmpty
        case .reload(let old, let new): old == new && old.allSatisfy { $0 == 0 }
        }
    }

    /// The batch as one of sections (a list is one section); `nil` for a reload.
    public var sectionedBatch: SectionedBatch? {
        switch self {
        case .list(let batch): batch.sectioned
        case .sectioned(let batch): batch
        case .reload: nil
        }
    }
}

extension BatchUpdate: Decodable {
    private enum Keys: String, CodingKey {
        case reload, sections, rows, counts
    }

    private enum CountKeys: String, CodingKey {
        case old, new
    }

    /// Reads the batch members of an answer (`rows`, `sections`, `counts`, or `reload`);
    /// other members of the answer are left to its own type.
    public init(from decoder: any Decoder) throws {
        let answer = try decoder.container(keyedBy: Keys.self)
        let counts = try answer.nestedContainer(keyedBy: CountKeys.self, forKey: .counts)
        let isList = (try? counts.decode(Int.self, forKey: .old)) != nil
        let (old, new) = isList
            ? ([try counts.decode(Int.self, forKey: .old)], [try counts.decode(Int.self, forKey: .new)])
            : (try counts.decode([Int].self, forKey: .old), try counts.decode([Int].self, forKey: .new))
        if try answer.decodeIfPresent(Bool.self, forKey: .reload) == true {
            self = .reload(oldCounts: old, newCounts: new)
        } else if isList {
            let rows = try answer.decode(WireRows<Int>.self, forKey: .rows)
            self = .list(ListBatch(rows: rows.changes, oldCount: old[0], newCount: new[0]))
        } else {
            let sections = try answer.decode(WireSectionChanges.self, forKey: .sections)
            let rows = try answer.decode(WireRows<WireRowPath>.self, forKey: .rows)
            self = .sectioned(SectionedBatch(sections: sections.changes, rows: rows.changes.map(\.path), oldCounts: old, newCounts: new))
        }
    }
}

/// `rows` of a batch; lists left out are empty (docs/batch-format.md §2.5).
private struct WireRows<Index: Decodable & Hashable & Comparable & Sendable>: Decodable {
    var changes: RowChanges<Index>

    private enum Keys: String, CodingKey {
        case deleted, inserted, reloaded, moved
    }

    init(from decoder: any Decoder) throws {
        let rows = try decoder.container(keyedBy: Keys.self)
        changes = RowChanges(
            deleted: try rows.decodeIfPresent([Index].self, forKey: .deleted) ?? [],
            inserted: try rows.decodeIfPresent([Index].self, forKey: .inserted) ?? [],
            reloaded: try rows.decodeIfPresent([Index].self, forKey: .reloaded) ?? [],
            moved: (try rows.decodeIfPresent([WireMove<Index>].self, forKey: .moved) ?? []).map(\.move)
        )
    }
}

/// `sections` of a sectioned batch.
private struct WireSectionChanges: Decodable {
    var changes: SectionChanges

    private enum Keys: String, CodingKey {
        case deleted, inserted, updated, moved
    }

    init(from decoder: any Decoder) throws {
        let sections = try decoder.container(keyedBy: Keys.self)
        changes = SectionChanges(
            deleted: try sections.decodeIfPresent([Int].self, forKey: .deleted) ?? [],
            inserted: try sections.decodeIfPresent([Int].self, forKey: .inserted) ?? [],
            updated: try sections.decodeIfPresent([Int].self, forKey: .updated) ?? [],
            moved: (try sections.decodeIfPresent([WireMove<Int>].self, forKey: .moved) ?? []).map(\.move)
        )
    }
}

/// `{"from": …, "to": …}`.
private struct WireMove<Index: Decodable & Hashable & Comparable & Sendable>: Decodable {
    var move: Move<Index>

    private enum Keys: String, CodingKey {
        case from, to
    }

    init(from decoder: any Decoder) throws {
        let move = try decoder.container(keyedBy: Keys.self)
        self.move = Move(from: try move.decode(Index.self, forKey: .from), to: try move.decode(Index.self, forKey: .to))
    }
}

/// `[section, row]`.
private struct WireRowPath: Decodable, Hashable, Comparable, Sendable {
    var path: RowPath

    init(from decoder: any Decoder) throws {
        var pair = try decoder.unkeyedContainer()
        path = RowPath(section: try pair.decode(Int.self), row: try pair.decode(Int.self))
        guard pair.isAtEnd else {
            throw DecodingError.dataCorruptedError(in: pair, debugDescription: "an index path is [section, row]")
        }
    }

    static func < (lhs: WireRowPath, rhs: WireRowPath) -> Bool { lhs.path < rhs.path }
}
