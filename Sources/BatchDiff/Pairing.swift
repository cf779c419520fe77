/// Which old element is paired with which new element, by identity.
///
/// Pairs are found with one hash table per call to ``pair(old:_:new:_:)`` (Heckel's idea: a
/// symbol table instead of a search), so pairing is expected linear time. Repeated
/// identities are paired in order of appearance: the first old repeat with the first new one.
@usableFromInline
struct Pairing {
    /// For each old element, the index of its new partner, or -1.
    @usableFromInline var oldToNew: [Int32]
    /// For each new element, the index of its old partner, or -1.
    @usableFromInline var newToOld: [Int32]
    /// For each old element in a table, the next old element with the same identity, or -1.
    @usableFromInline var nextRepeat: [Int32]

    @inlinable
    init(oldCount: Int, newCount: Int) {
        oldToNew = [Int32](repeating: -1, count: oldCount)
        newToOld = [Int32](repeating: -1, count: newCount)
        nextRepeat = oldToNew
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
    mutating func pair<Element: Diffable>(
        old: [Element], _ oldCandidates: Range<Int>, new: [Element], _ newCandidates: Range<Int>
    ) {
        guard !oldCandidates.isEmpty, !newCandidates.isEmpty else { return }
        var table = IdentityTable(capacityFor: oldCandidates.count)
        var oldToNew = take(&self.oldToNew)
        var newToOld = take(&self.newToOld)
        var nextRepeat = take(&self.nextRepeat)
        defer {
            self.oldToNew = oldToNew
            self.newToOld = newToOld
            self.nextRepeat = nextRepeat
        }
        // Pushing from the back leaves each chain of repeats in order of appearance.
        for oldIndex in oldCandidates.reversed() where oldToNew[oldIndex] < 0 {
            nextRepeat[oldIndex] = table.push(oldIndex, of: old)
        }
        for newIndex in newCandidates where newToOld[newIndex] < 0 {
            let element = new[newIndex]
            guard let slot = table.slot(of: element.identity, hash: element.identityHash, in: old) else { continue }
            let head = table.head(at: slot)
            guard head >= 0 else { continue }
            oldToNew[Int(head)] = Int32(newIndex)
            newToOld[newIndex] = head
            table.setHead(nextRepeat[Int(head)], at: slot)
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
