import BatchDiffFeeds

/// What the follower knows between transactions (docs/sources.md §4): the shapes served,
/// the relations the stream described, the feeds made, and two indexes that find the feeds
/// a row belongs to without a scan: a feed by its shape and placeholder values, and the
/// feeds holding a key. Applying a transaction changes it and returns what changed in each
/// feed; it does no I/O.
struct SourceState: Sendable {
    let shapes: [ServedShape]
    private let shapesByTable: [UInt32: [Int]]
    /// The relations the stream described, by oid.
    private(set) var relations: [UInt32: PgOutputMessage.Relation] = [:]
    /// For each relation and shape on it: each of the shape's columns' position in the relation.
    private var mappings: [UInt32: [Int: [Int?]]] = [:]
    private(set) var feeds: [FeedID: MadeFeed] = [:]
    private var feedsByValues: [Int: [[String]: FeedID]] = [:]
    private var holders: [Int: [[UInt8]: [FeedID]]] = [:]
    /// The feeds whose snapshot horizon the stream has not passed yet (usually none): only
    /// these can hold a transaction already.
    private var feedsWithHorizons: Set<FeedID> = []

    init(shapes: [ServedShape]) {
        self.shapes = shapes
        shapesByTable = Dictionary(grouping: shapes.indices) { shapes[$0].tableOID }
    }

    /// The shape whose template `id` matches, with the placeholders' values.
    func match(_ id: FeedID) -> (shape: Int, values: [String])? {
        for (index, shape) in shapes.enumerated() {
            if let values = shape.shape.feed.values(in: id.name) {
                return (index, shape.placeholderNames.map { values[$0]! })
            }
        }
        return nil
    }

    /// Learns a relation's columns (a `Relation` message).
    mutating func describe(_ relation: PgOutputMessage.Relation) {
        var byShape: [Int: [Int?]] = [:]
        for index in shapesByTable[relation.id] ?? [] {
            byShape[index] = shapes[index].columns.map { column in relation.columns.firstIndex { $0.name == column.name } }
        }
        mappings[relation.id] = byShape
        relations[relation.id] = relation
    }

    /// Whether the relation's shapes have feeds made (a change of any other is skipped).
    func hasFeeds(on relation: UInt32) -> Bool {
        (mappings[relation] ?? [:]).keys.contains { !(feedsByValues[$0] ?? [:]).isEmpty }
    }

    mutating func register(_ feed: MadeFeed) {
        feeds[feed.id] = feed
        feedsByValues[feed.shape, default: [:]][feed.placeholderValues] = feed.id
        if feed.horizon != nil { feedsWithHorizons.insert(feed.id) }
        for key in feed.rows.keys { holders[feed.shape, default: [:]][key, default: []].append(feed.id) }
    }

    /// Forgets feed `id` (dropped, idle, or its write failed).
    mutating func forget(_ id: FeedID) {
        guard let feed = feeds.removeValue(forKey: id) else { return }
        feedsByValues[feed.shape]?[feed.placeholderValues] = nil
        feedsWithHorizons.remove(id)
        for key in feed.rows.keys { holders[feed.shape]?[key]?.removeAll { $0 == id } }
    }

    /// Records a read of feed `id` at `now`.
    mutating func read(_ id: FeedID, at now: ContinuousClock.Instant) {
        feeds[id]?.lastRead = now
    }

    /// The keys of the rows an update or delete names whose unchanged TOASTed values no
    /// feed holds: they must be read from the table (``apply(_:xid:end:fetched:)``).
    func rowsToFetch(_ changes: [PgOutputMessage]) -> [(shape: Int, key: [UInt8])] {
        var missing: [(Int, [UInt8])] = []
        for change in changes {
            guard case .update(let relation, let old, let new) = change, new.contains(.unchangedToast) else { continue }
            for (index, mapping) in mappings[relation] ?? [:] {
                let shape = shapes[index]
                let row = shape.row(of: new, mapping: mapping)
                guard row.contains(.unchangedToast), let key = shape.key(of: old.map { shape.row(of: $0, mapping: mapping) } ?? row) else { continue }
                if holders[index]?[key]?.isEmpty ?? true { missing.append((index, key)) }
            }
        }
        return missing
    }

    /// Applies a transaction's changes (`xid`, its commit ending at `end`) to every made
    /// feed that does not hold it yet, with the rows `fetched` from the table for TOASTed
    /// values no feed holds (by shape and key); returns what changed in each feed.
    mutating func apply(
        _ changes: [PgOutputMessage], xid: UInt32, end: LogPosition, fetched: [Int: [[UInt8]: SourceRow]] = [:]
    ) -> [FeedID: FeedEdit] {
        var edits: [FeedID: FeedEdit] = [:]
        let holding = feedsWithHorizons.filter { feeds[$0]?.horizon?.holds(xid, endingAt: end) ?? false }
        for change in changes {
            switch change {
            case .insert(let relation, let new):
                for (index, mapping) in mappings[relation] ?? [:] {
                    place(shapes[index].row(of: new, mapping: mapping), replacing: nil, shape: index, skipping: holding, edits: &edits, fetched: fetched)
                }
            case .update(let relation, let old, let new):
                for (index, mapping) in mappings[relation] ?? [:] {
                    let shape = shapes[index]
                    let row = shape.row(of: new, mapping: mapping)
                    let oldKey = old.flatMap { shape.key(of: shape.row(of: $0, mapping: mapping)) }
                    place(row, replacing: oldKey, shape: index, skipping: holding, edits: &edits, fetched: fetched)
                }
            case .delete(let relation, let old):
                for (index, mapping) in mappings[relation] ?? [:] {
                    guard let key = shapes[index].key(of: shapes[index].row(of: old, mapping: mapping)) else { continue }
                    for id in holders[index]?[key] ?? [] where !holding.contains(id) { set(key, to: nil, in: id, edits: &edits) }
                }
            case .truncate(let relations):
                for relation in relations {
                    for index in (mappings[relation] ?? [:]).keys {
                        for id in (feedsByValues[index] ?? [:]).values where !holding.contains(id) {
                            for key in feeds[id]!.rows.keys { set(key, to: nil, in: id, edits: &edits) }
                        }
                    }
                }
            default: continue
            }
        }
        for id in feedsWithHorizons where feeds[id]?.horizon?.isPassed(at: end) ?? true {
            feeds[id]?.horizon = nil
            feedsWithHorizons.remove(id)
        }
        return edits
    }

    /// Puts a new or updated row (`oldKey`: its key before, when the update changed it)
    /// into the feed it now belongs to, removing it from those that held it.
    private mutating func place(
        _ sent: SourceRow, replacing oldKey: [UInt8]?, shape index: Int, skipping holding: Set<FeedID>,
        edits: inout [FeedID: FeedEdit], fetched: [Int: [[UInt8]: SourceRow]]
    ) {
        let shape = shapes[index]
        guard let newKey = shape.key(of: sent) else { return }
        let key = oldKey ?? newKey
        var row = sent
        if row.contains(.unchangedToast) {
            let held = (holders[index]?[key]?.first).flatMap { feeds[$0]?.rows[key] } ?? fetched[index]?[key]
            for column in row.indices where row[column] == .unchangedToast { row[column] = held?[column] ?? .null }
        }
        let target = shape.placeholderValues(of: row).flatMap { feedsByValues[index]?[$0] }.flatMap { holding.contains($0) ? nil : $0 }
        for id in holders[index]?[key] ?? [] where !holding.contains(id) && (id != target || key != newKey) {
            set(key, to: nil, in: id, edits: &edits)
        }
        if let target { set(newKey, to: row, in: target, edits: &edits) }
    }

    private mutating func set(_ key: [UInt8], to row: SourceRow?, in id: FeedID, edits: inout [FeedID: FeedEdit]) {
        // No copy of the feed is held while it changes: that would copy all its rows.
        guard let index = feeds[id]?.shape else { return }
        let shape = shapes[index]
        let before = feeds[id]?.rows[key]
        edits[id, default: FeedEdit()].touch(key, before: before, shape: shape) { [feeds] in feeds[id]?.sectionCounts[$0] ?? 0 }
        if let row, shape.section != nil {
            let header = shape.sectionHeader(of: row)
            edits[id]!.touchSection(header, count: feeds[id]?.sectionCounts[header] ?? 0)
        }
        feeds[id]!.set(key, to: row, shape: shape)
        if row == nil, before != nil {
            holders[index]?[key]?.removeAll { $0 == id }
            if holders[index]?[key]?.isEmpty ?? false { holders[index]?[key] = nil }
        } else if row != nil, before == nil {
            holders[index, default: [:]][key, default: []].append(id)
        }
    }
}
