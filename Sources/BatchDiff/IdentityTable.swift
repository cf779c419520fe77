/// An open-addressing hash table from identity to a chain of old elements that share it.
///
/// Each slot remembers one element as the identity's representative and the head of the
/// chain of its still unpaired repeats; the chain links live in ``Pairing``.
struct IdentityTable<Element: Diffable> {
    private let elements: [Element]
    private var representatives: [Int32]
    private var heads: [Int32]
    private var hashes: [Int]
    private let shift: Int

    /// A table for up to `count` identities of `elements`.
    init(elements: [Element], capacityFor count: Int) {
        var bits = 3
        while (1 << bits) < count * 2 { bits += 1 }
        self.elements = elements
        representatives = [Int32](repeating: -1, count: 1 << bits)
        heads = representatives
        hashes = [Int](repeating: 0, count: 1 << bits)
        shift = Int.bitWidth - bits
    }

    /// The slot of `identity`, or the empty slot where it belongs.
    private func probe(_ identity: Element.Identity, hash: Int) -> Int {
        let mask = representatives.count - 1
        // Fibonacci hashing spreads identity hashes whose low bits are poorly mixed.
        var slot = Int(truncatingIfNeeded: (UInt(bitPattern: hash) &* 0x9E37_79B9_7F4A_7C15) >> UInt(shift))
        while true {
            let representative = representatives[slot]
            if representative < 0 { return slot }
            if hashes[slot] == hash && elements[Int(representative)].identity == identity { return slot }
            slot = (slot + 1) & mask
        }
    }

    /// Makes `index` the head of its identity's chain and returns the previous head, or -1.
    mutating func push(_ index: Int) -> Int32 {
        let element = elements[index]
        let slot = probe(element.identity, hash: element.identityHash)
        if representatives[slot] < 0 {
            representatives[slot] = Int32(index)
            hashes[slot] = element.identityHash
        }
        let previous = heads[slot]
        heads[slot] = Int32(index)
        return previous
    }

    /// The slot holding the chain for `element`'s identity, if any element has it.
    func slot<Other: Diffable>(of element: Other) -> Int? where Other.Identity == Element.Identity {
        let slot = probe(element.identity, hash: element.identityHash)
        return representatives[slot] < 0 ? nil : slot
    }

    /// The first unpaired element of the chain in `slot`, or -1.
    func head(at slot: Int) -> Int32 { heads[slot] }

    mutating func setHead(_ index: Int32, at slot: Int) { heads[slot] = index }
}
