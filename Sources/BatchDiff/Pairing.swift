/// Which old element is paired with which new element, by identity.
///
/// Pairs are found with a hash table in each call to ``pair(old:_:new:_:)`` (Heckel's idea: a
/// symbol table instead of a search), so pairing is expected linear time. Repeated
/// identities are paired in order of appearance: the first old repeat with the first new one.
///
/// A run of candidates that already agree at the front (the same identities at the same
/// offsets, the common case of a list that changed little), and one at the back, are paired
/// without the table, so it holds only the rest: two identical lists need no table at all
/// (PairingByIdentity.swift).
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

    /// The 31 hash bits of the unpaired element at `index` of `elements`, whose entry is
    /// `entry`: those it keeps, or computed.
    @inlinable @inline(__always)
    static func keptHash<Elements: DiffableElements>(in entry: Int32, of index: Int, in elements: Elements) -> Int {
        keptHash(in: entry) ?? keptBits(of: elements.identityHash(at: index))
    }

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
}

/// Moves the array out of `array`, leaving it empty, so it can be changed without a copy.
@usableFromInline @inline(__always)
func take(_ array: inout [Int32]) -> [Int32] {
    var taken: [Int32] = []
    swap(&taken, &array)
    return taken
}
