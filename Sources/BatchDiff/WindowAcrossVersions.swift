/// A window seen across several versions: the one batch that takes a window of the first of
/// consecutive versions to the same window of the last, from the batches of the versions
/// (each from the version before).
///
/// The rows (and sections) of the first window are followed through the batches by their
/// positions in the whole collection (moved, kept or gone, found from the batch's operations
/// by binary search, ``KeptPositions``), remembering whether their content changed; those
/// that end in the last window are paired by the differ with the first window's, stand-ins
/// of the same identity, and the rest of the last window is inserted. So a row that leaves
/// the window and comes back moves, as in the whole collection's batch, and the work is the
/// window's and the batches' operations, times a logarithm, never the collection's.
extension ListBatchWindow {
    /// The window `offset..<offset+limit` across `batches`, the batches of consecutive
    /// versions (at least one). Throws ``BatchError`` when they do not follow one another.
    package init(across batches: [ListBatch], offset: Int, limit: Int) throws {
        try self.init(across: batches, oldOffset: offset, newOffset: offset, limit: limit)
    }

    /// The batch from the window `oldOffset..<oldOffset+limit` of the first version to the
    /// window `newOffset..<newOffset+limit` of the last (a window anchored on a row that
    /// moved), across `batches` as ``init(across:offset:limit:)`` says.
    package init(across batches: [ListBatch], oldOffset: Int, newOffset: Int, limit: Int) throws {
        guard let firstBatch = batches.first else { throw BatchError("a window across no versions") }
        guard batches.count > 1 || oldOffset != newOffset else {
            self.init(firstBatch, offset: oldOffset, limit: limit)
            return
        }
        // The first window's rows, by identity: where each is now, if anywhere.
        var rows = windowRange(offset: oldOffset, limit: limit, count: firstBatch.oldCount).map { Followed<Int>(position: $0) }
        var count = firstBatch.oldCount
        for batch in batches {
            guard batch.oldCount == count else { throw BatchError("a version's batch does not follow the one before: counts.old \(batch.oldCount), not \(count)") }
            let crossing = PositionCrossing(deleted: batch.rows.deleted, inserted: batch.rows.inserted, moves: batch.rows.moved)
            let reloaded = Set(batch.rows.reloaded)
            for index in rows.indices {
                guard let position = rows[index].position else { continue }
                rows[index].position = crossing.newPosition(ofOld: position)
                rows[index].isChanged = rows[index].isChanged || reloaded.contains(position)
            }
            count = batch.newCount
        }
        let lastWindow = windowRange(offset: newOffset, limit: limit, count: count)
        let (first, last) = StandIns.windows(following: rows, to: lastWindow)
        let composed = BatchDiff.batch(from: first, to: last)
        let newIndex = Dictionary(last.enumerated().map { ($1.identity, $0) }, uniquingKeysWith: { first, _ in first })
        self.init(batch: composed, reloadedPositions: composed.rows.reloaded.compactMap { newIndex[first[$0].identity].map { lastWindow.lowerBound + $0 } })
    }
}

extension SectionedBatchWindow {
    /// The window `offset..<offset+limit` of sections across `batches`, the batches of
    /// consecutive versions (at least one). Throws ``BatchError`` when they do not follow
    /// one another.
    package init(across batches: [SectionedBatch], offset: Int, limit: Int) throws {
        try self.init(across: batches, oldOffset: offset, newOffset: offset, limit: limit)
    }

    /// The batch from the window of sections `oldOffset..<oldOffset+limit` of the first
    /// version to the window `newOffset..<newOffset+limit` of the last, across `batches` as
    /// ``init(across:offset:limit:)`` says.
    package init(across batches: [SectionedBatch], oldOffset: Int, newOffset: Int, limit: Int) throws {
        guard let firstBatch = batches.first else { throw BatchError("a window across no versions") }
        guard batches.count > 1 || oldOffset != newOffset else {
            self.init(firstBatch, offset: oldOffset, limit: limit)
            return
        }
        let window = windowRange(offset: oldOffset, limit: limit, count: firstBatch.oldCounts.count)
        var sections = window.map { Followed<Int>(position: $0) }
        var rows: [Followed<RowPath>] = []
        for section in window {
            rows += (0..<firstBatch.oldCounts[section]).map { Followed(position: RowPath(section: section, row: $0)) }
        }
        var counts = firstBatch.oldCounts
        for batch in batches {
            guard batch.oldCounts == counts else { throw BatchError("a version's batch does not follow the one before: counts.old \(batch.oldCounts)") }
            let crossing = PositionCrossing(deleted: batch.sections.deleted, inserted: batch.sections.inserted, moves: batch.sections.moved)
            let updated = Set(batch.sections.updated)
            for index in sections.indices {
                guard let position = sections[index].position else { continue }
                let new = crossing.newPosition(ofOld: position)
                sections[index].position = new
                sections[index].isChanged = sections[index].isChanged || new.map(updated.contains) == true
            }
            let rowCrossing = RowCrossing(batch.rows, sections: crossing)
            let reloaded = Set(batch.rows.reloaded)
            for index in rows.indices {
                guard let path = rows[index].position else { continue }
                rows[index].position = rowCrossing.newPath(ofOld: path)
                rows[index].isChanged = rows[index].isChanged || reloaded.contains(path)
            }
            counts = batch.newCounts
        }
        var standIns = StandIns(after: sections.count + rows.count)
        let first = StandIns.firstSections(window: window, counts: firstBatch.oldCounts)
        let lastWindow = windowRange(offset: newOffset, limit: limit, count: counts.count)
        let headerAt = Dictionary(sections.enumerated().compactMap { identity, section in section.position.map { ($0, StandIn(identity, section.isChanged)) } }, uniquingKeysWith: { first, _ in first })
        let rowAt = Dictionary(rows.enumerated().compactMap { identity, row in row.position.map { ($0, StandIn(sections.count + identity, row.isChanged)) } }, uniquingKeysWith: { first, _ in first })
        let last = lastWindow.map { section in
            Section(
                header: headerAt[section] ?? standIns.make(),
                items: (0..<counts[section]).map { rowAt[RowPath(section: section, row: $0)] ?? standIns.make() }
            )
        }
        let composed = BatchDiff.batch(from: first, to: last)
        var newPaths: [Int: RowPath] = [:]
        for (section, rows) in last.enumerated() {
            for (row, standIn) in rows.items.enumerated() { newPaths[standIn.identity] = RowPath(section: lastWindow.lowerBound + section, row: row) }
        }
        self.init(batch: composed, reloadedPaths: composed.rows.reloaded.compactMap { newPaths[first[$0.section].items[$0.row].identity] })
    }
}

/// A row or section of a window's first version, followed through later versions: where
/// it stands in the whole collection (a position, or a row's path), `nil` once it is gone,
/// and whether its content changed.
private struct Followed<Position> {
    var position: Position?
    var isChanged = false
}

/// Where a batch takes each old position: a deleted element nowhere, a moved one where it
/// moves, a kept one past the deletes and inserts around it.
private struct PositionCrossing {
    private let deleted: Set<Int>
    private let moves: [Int: Int]
    private let kept: KeptPositions

    init(deleted: [Int], inserted: [Int], moves: [Move<Int>]) {
        self.deleted = Set(deleted)
        self.moves = Dictionary(moves.map { ($0.from, $0.to) }, uniquingKeysWith: { first, _ in first })
        kept = KeptPositions(deleted: deleted.sorted(), inserted: inserted.sorted(), moves: moves)
    }

    func newPosition(ofOld old: Int) -> Int? {
        if deleted.contains(old) { return nil }
        return moves[old] ?? kept.newPosition(ofOld: old)
    }
}

/// Where a sectioned batch takes each old row: a deleted row (or one of a deleted section)
/// nowhere, a moved one where it moves, a kept one to its section's new position, past the
/// rows gone from and come to its section.
private struct RowCrossing {
    private let deleted: Set<RowPath>
    private let moves: [RowPath: RowPath]
    private let sections: PositionCrossing
    private let gone: [Int: [Int]]
    private let came: [Int: [Int]]

    init(_ rows: RowChanges<RowPath>, sections: PositionCrossing) {
        deleted = Set(rows.deleted)
        moves = Dictionary(rows.moved.map { ($0.from, $0.to) }, uniquingKeysWith: { first, _ in first })
        self.sections = sections
        (gone, came) = rows.goneAndCame
    }

    func newPath(ofOld old: RowPath) -> RowPath? {
        if deleted.contains(old) { return nil }
        if let moved = moves[old] { return moved }
        guard let section = sections.newPosition(ofOld: old.section) else { return nil }
        let kept = KeptPositions(gone: gone[old.section] ?? [], came: came[section] ?? [])
        return RowPath(section: section, row: kept.newPosition(ofOld: old.row))
    }
}

/// A row or a section's header of a window followed across versions, as the differ pairs
/// them: which one it is, and whether its content changed since the first version.
private struct StandIn: Diffable, Hashable {
    let identity: Int
    var isChanged = false

    init(_ identity: Int, _ isChanged: Bool = false) {
        self.identity = identity
        self.isChanged = isChanged
    }
}

/// Stand-ins for a window's first and last versions.
private struct StandIns {
    private var next: Int

    /// Stand-ins of identities from `start` on.
    init(after start: Int) {
        next = start
    }

    /// A stand-in of an identity of its own.
    mutating func make() -> StandIn {
        defer { next += 1 }
        return StandIn(next)
    }

    /// The first and last windows of a list whose first window's rows were followed to
    /// `rows` (each one's identity its index): those in `last` (positions of the last
    /// version) paired, the others new.
    static func windows(following rows: [Followed<Int>], to last: Range<Int>) -> (first: [StandIn], last: [StandIn]) {
        let at = Dictionary(rows.enumerated().compactMap { identity, row in row.position.map { ($0, StandIn(identity, row.isChanged)) } }, uniquingKeysWith: { first, _ in first })
        var standIns = StandIns(after: rows.count)
        return (rows.indices.map { StandIn($0) }, last.map { at[$0] ?? standIns.make() })
    }

    /// The first window of sections, `window` of a collection of `counts`: each section's
    /// header's identity its index in the window, its rows' the window's sections' count
    /// plus their index among the window's rows, in order.
    static func firstSections(window: Range<Int>, counts: [Int]) -> [Section<StandIn, StandIn>] {
        var nextRow = window.count
        return window.enumerated().map { identity, position in
            defer { nextRow += counts[position] }
            return Section(header: StandIn(identity), items: (nextRow..<nextRow + counts[position]).map { StandIn($0) })
        }
    }
}
