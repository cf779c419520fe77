/// An open-addressing hash table from identity to a chain of old elements that share it.
///
/// Each slot holds an identity and the head of the chain of its still unpaired elements
/// (the chain links live in ``Pairing``), packed together so a probe touches one cache line.
@usableFromInline
struct IdentityTable<Identity: Hashable> {
    @usableFromInline
    struct Slot {
        @usableFromInline var identity: Identity
        @usableFromInline var hash: Int
        @usableFromInline var head: Int32

        @inlinable
        init(identity: Identity, hash: Int, head: Int32) {
            self.identity = identity
            self.hash = hash
            self.head = head
        }
    }

    @usableFromInline var slots: [Slot?]
    @usableFromInline let shift: Int

    /// A table for up to `count` identities, at most four fifths full.
    @inlinable
    init(capacityFor count: Int) {
        var bits = 3
        while (1 << bits) < count + count / 4 + 1 { bits += 1 }
        slots = [Slot?](repeating: nil, count: 1 << bits)
        shift = Int.bitWidth - bits
    }

    /// The slot of `identity`, or the empty slot where it belongs.
    @inlinable @inline(__always)
    func probe(_ identity: Identity, hash: Int) -> Int {
        let mask = slots.count - 1
        // Fibonacci hashing spreads identity hashes whose low bits are poorly mixed.
        var index = Int(truncatingIfNeeded: (UInt(bitPattern: hash) &* 0x9E37_79B9_7F4A_7C15) >> UInt(shift))
        while let slot = slots[index] {
            if slot.hash == hash && slot.identity == identity { return index }
            index = (index + 1) & mask
        }
        return index
    }

    /// Makes `element` the head of the chain of `identity` and returns the previous head, or -1.
    @inlinable
    mutating func push(_ element: Int, identity: Identity, hash: Int) -> Int32 {
        let index = probe(identity, hash: hash)
        let previous = slots[index]?.head ?? -1
        slots[index] = Slot(identity: identity, hash: hash, head: Int32(element))
        return previous
    }

    /// The slot holding the chain of `identity`, if an element has it.
    @inlinable
    func slot(of identity: Identity, hash: Int) -> Int? {
        let index = probe(identity, hash: hash)
        return slots[index] == nil ? nil : index
    }

    /// The first unpaired element of the chain in `slot`, or -1.
    @inlinable
    func head(at slot: Int) -> Int32 { slots[slot]!.head }

    @inlinable
    mutating func setHead(_ element: Int32, at slot: Int) { slots[slot]!.head = element }
}
