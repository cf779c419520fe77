/// Where an element of a batch's new collection stood in the old one, found from the
/// batch's operations alone (a window anchored on a row finds where its anchor stood in the
/// client's version): in time proportional to the operations.
extension ListBatch {
    /// The old position of the row at new position `new`; `nil` when the batch inserts it
    /// (a new row, or a changed row that moves: deleted and inserted).
    package func oldPosition(ofNew new: Int) -> Int? {
        positionBefore(new, inserted: rows.inserted, deleted: rows.deleted, moves: rows.moved)
    }
}

extension SectionedBatch {
    /// The old position of the section at new position `new`; `nil` when the batch inserts
    /// it (a new section, or one that changed inside and moves).
    package func oldSectionPosition(ofNew new: Int) -> Int? {
        positionBefore(new, inserted: sections.inserted, deleted: sections.deleted, moves: sections.moved)
    }
}

/// The old position of the element at new position `new` under the operations `inserted`,
/// `deleted` (both sorted) and `moves`; `nil` when it is inserted.
private func positionBefore(_ new: Int, inserted: [Int], deleted: [Int], moves: [Move<Int>]) -> Int? {
    if inserted.contains(new) { return nil }
    if let move = moves.first(where: { $0.to == new }) { return move.from }
    return KeptPositions(deleted: deleted, inserted: inserted, moves: moves).oldPosition(ofNew: new)
}
