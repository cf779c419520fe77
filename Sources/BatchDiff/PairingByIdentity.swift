/// How ``Pairing/pair(old:_:new:_:)`` pairs by identity: the common front and back in
/// place, the rest through a hash table.
extension Pairing {
    /// ``pair(old:_:new:_:)`` on the entries `oldToNew` and `newToOld`.
    ///
    /// The common front is paired in place: the repeats in it keep their order of
    /// appearance. So is a long common back (a list that gained rows at its top), unless an
    /// identity in it also has an element left unpaired before it: then that element, not
    /// the one in the back, comes first in order of appearance, and the back is paired by
    /// table with the rest.
    @inlinable
    static func pair<Elements: DiffableElements>(
        old: Elements, _ oldCandidates: Range<Int>, new: Elements, _ newCandidates: Range<Int>,
        oldToNew: UnsafeMutableBufferPointer<Int32>, newToOld: UnsafeMutableBufferPointer<Int32>
    ) {
        let front = pairRun(old: old, from: oldCandidates.lowerBound, before: oldCandidates.upperBound,
                            new: new, from: newCandidates.lowerBound, before: newCandidates.upperBound, oldToNew: oldToNew, newToOld: newToOld)
        let (oldStart, newStart) = (oldCandidates.lowerBound + front, newCandidates.lowerBound + front)
        var oldEnd = oldCandidates.upperBound
        var newEnd = newCandidates.upperBound
        while oldEnd > oldStart, newEnd > newStart, oldToNew[oldEnd - 1] < 0, newToOld[newEnd - 1] < 0,
              old.hasIdentity(at: oldEnd - 1, of: newEnd - 1, in: new) {
            oldEnd -= 1
            newEnd -= 1
        }
        // A short back saves less than looking for the unpaired costs: paired by table.
        if (oldCandidates.upperBound - oldEnd) * 8 < oldCandidates.upperBound - oldStart {
            oldEnd = oldCandidates.upperBound
            newEnd = newCandidates.upperBound
        }
        let leftUnpaired = pairByTable(old: old, oldStart..<oldEnd, new: new, newStart..<newEnd, oldToNew: oldToNew, newToOld: newToOld)
        let oldBack = oldEnd..<oldCandidates.upperBound
        guard !oldBack.isEmpty else { return }
        if leftUnpaired == 0 || noneLeftUnpaired(
            withIdentitiesOf: oldBack, in: old, oldStart..<oldEnd, new, newStart..<newEnd, count: leftUnpaired, oldToNew: oldToNew, newToOld: newToOld
        ) {
            for oldIndex in oldBack { link(old: oldIndex, new: newEnd + oldIndex - oldEnd, oldToNew: oldToNew, newToOld: newToOld) }
        } else {
            pairByTable(old: old, oldStart..<oldCandidates.upperBound, new: new, newStart..<newCandidates.upperBound, oldToNew: oldToNew, newToOld: newToOld)
        }
    }

    /// Pairs `old[oldStart]` with `new[newStart]`, the next with the next, and so on while
    /// both are unpaired, before their bounds, and of the same identity; returns how many.
    @inlinable @inline(__always)
    static func pairRun<Elements: DiffableElements>(
        old: Elements, from oldStart: Int, before oldEnd: Int, new: Elements, from newStart: Int, before newEnd: Int,
        oldToNew: UnsafeMutableBufferPointer<Int32>, newToOld: UnsafeMutableBufferPointer<Int32>
    ) -> Int {
        var length = 0
        while oldStart + length < oldEnd, newStart + length < newEnd,
              oldToNew[oldStart + length] < 0, newToOld[newStart + length] < 0,
              old.hasIdentity(at: oldStart + length, of: newStart + length, in: new) {
            link(old: oldStart + length, new: newStart + length, oldToNew: oldToNew, newToOld: newToOld)
            length += 1
        }
        return length
    }

    /// Pairs the old element at `oldIndex` with the new one at `newIndex`, in the entries.
    @inlinable @inline(__always)
    static func link(old oldIndex: Int, new newIndex: Int, oldToNew: UnsafeMutableBufferPointer<Int32>, newToOld: UnsafeMutableBufferPointer<Int32>) {
        oldToNew[oldIndex] = Int32(newIndex)
        newToOld[newIndex] = Int32(oldIndex)
    }

    /// Pairs the unpaired elements of `old[oldRange]` and `new[newRange]` through one hash
    /// table of the old ones (Heckel's symbol table), and returns how many of them, old and
    /// new, it leaves unpaired.
    @inlinable @discardableResult
    static func pairByTable<Elements: DiffableElements>(
        old: Elements, _ oldRange: Range<Int>, new: Elements, _ newRange: Range<Int>,
        oldToNew: UnsafeMutableBufferPointer<Int32>, newToOld: UnsafeMutableBufferPointer<Int32>
    ) -> Int {
        guard !oldRange.isEmpty, !newRange.isEmpty else {
            return oldRange.count { oldToNew[$0] < 0 } + newRange.count { newToOld[$0] < 0 }
        }
        var unpaired = 0
        var table = IdentityTable(capacityFor: oldRange.count)
        // For each old element of the range, the next one with the same identity, or -1.
        var nextRepeat = [Int32](filling: -1, count: oldRange.count)
        nextRepeat.withUnsafeMutableBufferPointer { nextRepeat in
            // Pushing from the back leaves each chain of repeats in order of appearance.
            var oldRepeats = false
            for oldIndex in oldRange.reversed() where oldToNew[oldIndex] < 0 {
                unpaired += 1
                let hash = old.identityHash(at: oldIndex)
                oldToNew[oldIndex] = Self.unpaired(hash: hash)
                let next = table.push(oldIndex, hash: hash, of: old)
                nextRepeat[oldIndex - oldRange.lowerBound] = next
                if next >= 0 { oldRepeats = true }
            }
            for newIndex in newRange where newToOld[newIndex] < 0 {
                let hash = new.identityHash(at: newIndex)
                // A head already paired was paired by a run below: the only old element of
                // its identity, so this one is left unpaired.
                guard let (head, slot) = table.head(of: newIndex, of: new, hash: hash, in: old), oldToNew[Int(head)] < 0 else {
                    newToOld[newIndex] = Self.unpaired(hash: hash)
                    unpaired += 1
                    continue
                }
                unpaired -= 1
                link(old: Int(head), new: newIndex, oldToNew: oldToNew, newToOld: newToOld)
                table.setHead(nextRepeat[Int(head) - oldRange.lowerBound], at: slot)
                // The run that goes on after a pair, in both, is paired without the table when
                // no old identity repeats: each old element is then the only one of its
                // identity, and unpaired, the first any new one can pair with.
                guard !oldRepeats else { continue }
                unpaired -= pairRun(old: old, from: Int(head) + 1, before: oldRange.upperBound,
                                    new: new, from: newIndex + 1, before: newRange.upperBound, oldToNew: oldToNew, newToOld: newToOld)
            }
        }
        return unpaired
    }

    /// Whether none of the `count` elements left unpaired in `old[oldMiddle]` and
    /// `new[newMiddle]` has the identity of an element of `old[oldBack]`. The unpaired
    /// elements go into a table and a filter by the hash bits their entries keep; each element
    /// of the back is hashed and looked up, in the table when the filter lets it.
    @inlinable
    static func noneLeftUnpaired<Elements: DiffableElements>(
        withIdentitiesOf oldBack: Range<Int>, in old: Elements, _ oldMiddle: Range<Int>, _ new: Elements, _ newMiddle: Range<Int>,
        count: Int, oldToNew: UnsafeMutableBufferPointer<Int32>, newToOld: UnsafeMutableBufferPointer<Int32>
    ) -> Bool {
        // A key is an old index, or old.count plus a new index.
        guard old.count + new.count <= Int(Int32.max) else { return false }
        var table = IdentityTable(capacityFor: count)
        var filter = IdentityFilter(capacityFor: count)
        for oldIndex in oldMiddle where oldToNew[oldIndex] < 0 {
            let hash = keptHash(in: oldToNew[oldIndex], of: oldIndex, in: old)
            table.insert(oldIndex, hash: hash)
            filter.add(hash: hash)
        }
        for newIndex in newMiddle where newToOld[newIndex] < 0 {
            let hash = keptHash(in: newToOld[newIndex], of: newIndex, in: new)
            table.insert(old.count + newIndex, hash: hash)
            filter.add(hash: hash)
        }
        return oldBack.allSatisfy { oldIndex in
            let hash = keptBits(of: old.identityHash(at: oldIndex))
            return !filter.mayContain(hash: hash) || !table.contains(hash: hash) { key in
                key < old.count ? old.hasIdentity(at: key, of: oldIndex, in: old) : old.hasIdentity(at: oldIndex, of: key - old.count, in: new)
            }
        }
    }
}
