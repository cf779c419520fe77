/// An open-addressing hash table from identity to a chain of old elements that share it.
///
/// A slot holds no identity, only the index of an old element that has it (the `key`), the
/// head of the chain of its still unpaired elements (the chain links live in ``Pairing``)
/// and 32 bits of the identity's hash: 12 bytes, so a table for millions of elements stays
/// small. A probe compares the hash bits first and reads the key element's identity only
/// when they match.
@usableFromInline
struct IdentityTable {
    @usableFromInline
    struct Slot {
        /// An old element with the slot's identity, or -1 for an empty slot.
        @usableFromInline var key: Int32
        @usableFromInline var head: Int32
        @usableFromInline var hashBits: UInt32

        @inlinable
        init(key: Int32, head: Int32, hashBits: UInt32) {
            self.key = key
            self.head = head
            self.hashBits = hashBits
        }
    }

    @usableFromInline var slots: [Slot]
    @usableFromInline let shift: Int

    /// A table for up to `count` identities, at most four fifths full.
    @inlinable
    init(capacityFor count: Int) {
        var bits = 3
        while (1 << bits) < count + count / 4 + 1 { bits += 1 }
        slots = [Slot](filling: Slot(key: -1, head: -1, hashBits: 0), count: 1 << bits)
        shift = Int.bitWidth - bits
    }

    /// The slot of `identity`, or the empty slot where it belongs; keys index `elements`.
    @inlinable @inline(__always)
    func probe<Elements: DiffableElements>(_ identity: Elements.Element.Identity, hash: Int, in elements: Elements) -> Int {
        let mask = slots.count - 1
        // Fibonacci hashing spreads identity hashes whose low bits are poorly mixed.
        let mixed = UInt(bitPattern: hash) &* 0x9E37_79B9_7F4A_7C15
        var index = Int(truncatingIfNeeded: mixed >> UInt(shift))
        let bits = UInt32(truncatingIfNeeded: mixed)
        while case let slot = slots[index], slot.key >= 0 {
            if slot.hashBits == bits && elements.element(at: Int(slot.key)).identity == identity { return index }
            index = (index + 1) & mask
        }
        return index
    }

    /// Makes `element` (an index of `elements`) the head of the chain of its identity and
    /// returns the previous head, or -1.
    @inlinable
    mutating func push<Elements: DiffableElements>(_ element: Int, of elements: Elements) -> Int32 {
        let read = elements.element(at: element)
        let hash = read.identityHash
        let index = probe(read.identity, hash: hash, in: elements)
        let previous = slots[index].key >= 0 ? slots[index].head : -1
        let bits = UInt32(truncatingIfNeeded: UInt(bitPattern: hash) &* 0x9E37_79B9_7F4A_7C15)
        slots[index] = Slot(key: Int32(element), head: Int32(element), hashBits: bits)
        return previous
    }

    /// The slot holding the chain of `identity`, if an element of `elements` has it.
    @inlinable
    func slot<Elements: DiffableElements>(of identity: Elements.Element.Identity, hash: Int, in elements: Elements) -> Int? {
        let index = probe(identity, hash: hash, in: elements)
        return slots[index].key < 0 ? nil : index
    }

    /// The first unpaired element of the chain in `slot`, or -1.
    @inlinable
    func head(at slot: Int) -> Int32 { slots[slot].head }

    @inlinable
    mutating func setHead(_ element: Int32, at slot: Int) { slots[slot].head = element }
}
