/// Which old element is paired with which new element, by identity.
///
/// Pairs are found with one hash table per call to ``pair(old:_:new:_:)`` (Heckel's idea: a
/// symbol table instead of a search), so pairing is expected linear time. Repeated
/// identities are paired in order of appearance: the first old repeat with the first new one.
///
/// A run of candidates that already agree at the front (the same identities at the same
/// offsets, the common case of a list that changed little) is paired before the table is
/// built, so the table holds only the rest: two identical lists need no table at all.
@usableFromInline
struct Pairing {
    /// For each old element, the index of its new partner, or -1.
    @usableFromInline var oldToNew: [Int32]
    /// For each new element, the index of its old partner, or -1.
    @usableFromInline var newToOld: [Int32]

    @inlinable
    init(oldCount: Int, newCount: Int) {
        oldToNew = [Int32](filling: -1, count: oldCount)
        newToOld = [Int32](filling: -1, count: newCount)
    }

    @inlinable
    func partner(ofOld index: Int) -> Int? {
        let partner = oldToNew[index]
        return partner < 0 ? nil : Int(partner)
    }

    @inlinable
    func partner(ofNew index: Int) -> Int? {
        let partner = newToOld[index]
        return partner < 0 ? nil : Int(partner)
    }

    mutating func unpair(old index: Int) {
        guard let partner = partner(ofOld: index) else { return }
        oldToNew[index] = -1
        newToOld[partner] = -1
    }

    /// Pairs the old element at `oldIndex` with the new one at `newIndex`.
    mutating func pair(old oldIndex: Int, new newIndex: Int) {
        oldToNew[oldIndex] = Int32(newIndex)
        newToOld[newIndex] = Int32(oldIndex)
    }

    /// Pairs the still unpaired `old` elements at `oldCandidates` with the still unpaired
    /// `new` elements at `newCandidates`, by identity, repeats in order of appearance.
    @inlinable
    mutating func pair<Elements: DiffableElements>(
        old: Elements, _ oldCandidates: Range<Int>, new: Elements, _ newCandidates: Range<Int>
    ) {
        guard !oldCandidates.isEmpty, !newCandidates.isEmpty else { return }
        var oldToNew = take(&self.oldToNew)
        var newToOld = take(&self.newToOld)
        defer {
            self.oldToNew = oldToNew
            self.newToOld = newToOld
        }
        // The common front, paired in place: the repeats in it keep their order of appearance.
        var oldStart = oldCandidates.lowerBound
        var newStart = newCandidates.lowerBound
        while oldStart < oldCandidates.upperBound, newStart < newCandidates.upperBound,
              oldToNew[oldStart] < 0, newToOld[newStart] < 0,
              old.hasIdentity(at: oldStart, of: newStart, in: new) {
            oldToNew[oldStart] = Int32(newStart)
            newToOld[newStart] = Int32(oldStart)
            oldStart += 1
            newStart += 1
        }
        let oldRest = oldStart..<oldCandidates.upperBound
        guard !oldRest.isEmpty, newStart < newCandidates.upperBound else { return }
        var table = IdentityTable(capacityFor: oldRest.count)
        // For each old element of the rest, the next one with the same identity, or -1.
        var nextRepeat = [Int32](filling: -1, count: oldRest.count)
        // Pushing from the back leaves each chain of repeats in order of appearance.
        for oldIndex in oldRest.reversed() where oldToNew[oldIndex] < 0 {
            nextRepeat[oldIndex - oldStart] = table.push(oldIndex, hash: old.identityHash(at: oldIndex), of: old)
        }
        for newIndex in newStart..<newCandidates.upperBound where newToOld[newIndex] < 0 {
            guard let (head, slot) = table.head(of: newIndex, of: new, hash: new.identityHash(at: newIndex), in: old) else { continue }
            oldToNew[Int(head)] = Int32(newIndex)
            newToOld[newIndex] = head
            table.setHead(nextRepeat[Int(head) - oldStart], at: slot)
        }
    }
}

/// Moves the array out of `array`, leaving it empty, so it can be changed without a copy.
@usableFromInline @inline(__always)
func take(_ array: inout [Int32]) -> [Int32] {
    var taken: [Int32] = []
    swap(&taken, &array)
    return taken
}
