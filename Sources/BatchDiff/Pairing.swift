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
    /// For each old element, the index of its new partner; negative when it has none (see
    /// ``unpaired(hash:)``).
    @usableFromInline var oldToNew: [Int32]
    /// For each new element, the index of its old partner; negative when it has none.
    @usableFromInline var newToOld: [Int32]

    /// The entry of an element left unpaired whose identity hash ``pair(old:_:new:_:)``
    /// computed: negative, holding 31 bits of the hash, so that pairing the elements left
    /// over once more (rows across sections) reads no identity again. Those rows lie anywhere
    /// in memory, and reading each again was a fifth of diffing 100 sections of 1,000 rows;
    /// kept in columns of their own, the hashes would cost a request 8 bytes a row. -1, the
    /// entry of an unpaired element otherwise, keeps no hash.
    @inlinable @inline(__always)
    static func unpaired(hash: Int) -> Int32 { Int32(bitPattern: UInt32(truncatingIfNeeded: hash) | 0x8000_0000) }

    /// The 31 bits of an identity hash an entry keeps: the whole of what a pairing of the
    /// elements left over hashes them by, kept or computed again.
    @inlinable @inline(__always)
    static func keptBits(of hash: Int) -> Int { hash & 0x7FFF_FFFF }

    /// The hash bits the entry of an unpaired element keeps, if it keeps them.
    @inlinable @inline(__always)
    static func keptHash(in entry: Int32) -> Int? { entry < -1 ? Int(UInt32(bitPattern: entry) & 0x7FFF_FFFF) : nil }

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
    /// `new` elements at `newCandidates`, by identity, repeats in order of appearance. The
    /// elements it hashes and leaves unpaired keep their hash (``unpaired(hash:)``).
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
        // Through buffers: no uniqueness check for each entry written.
        oldToNew.withUnsafeMutableBufferPointer { oldToNew in
            newToOld.withUnsafeMutableBufferPointer { newToOld in
                Self.pair(old: old, oldCandidates, new: new, newCandidates, oldToNew: oldToNew, newToOld: newToOld)
            }
        }
    }

    /// ``pair(old:_:new:_:)`` on the entries `oldToNew` and `newToOld`.
    @inlinable
    static func pair<Elements: DiffableElements>(
        old: Elements, _ oldCandidates: Range<Int>, new: Elements, _ newCandidates: Range<Int>,
        oldToNew: UnsafeMutableBufferPointer<Int32>, newToOld: UnsafeMutableBufferPointer<Int32>
    ) {
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
        nextRepeat.withUnsafeMutableBufferPointer { nextRepeat in
            // Pushing from the back leaves each chain of repeats in order of appearance.
            for oldIndex in oldRest.reversed() where oldToNew[oldIndex] < 0 {
                let hash = old.identityHash(at: oldIndex)
                oldToNew[oldIndex] = unpaired(hash: hash)
                nextRepeat[oldIndex - oldStart] = table.push(oldIndex, hash: hash, of: old)
            }
            for newIndex in newStart..<newCandidates.upperBound where newToOld[newIndex] < 0 {
                let hash = new.identityHash(at: newIndex)
                guard let (head, slot) = table.head(of: newIndex, of: new, hash: hash, in: old) else {
                    newToOld[newIndex] = unpaired(hash: hash)
                    continue
                }
                oldToNew[Int(head)] = Int32(newIndex)
                newToOld[newIndex] = head
                table.setHead(nextRepeat[Int(head) - oldStart], at: slot)
            }
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
