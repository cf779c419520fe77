/// An open-addressing hash table from identity to a chain of old elements that share it.
///
/// A slot holds no identity, only the head of the chain of its still unpaired elements (the
/// chain links live in ``Pairing``) and 32 bits of the identity's hash: 8 bytes, so the table
/// for 100,000 elements stays within a megabyte. A probe compares the hash bits first and
/// reads the head element's identity only when they match. A slot whose chain is used up
/// keeps its place (probes go past it) but no longer names an identity: every element of
/// that identity looked up later is unpaired, as it would be if found.
@usableFromInline
struct IdentityTable {
    @usableFromInline
    struct Slot {
        /// The first unpaired element with the slot's identity, or one of the marks below.
        @usableFromInline var head: Int32
        @usableFromInline var hashBits: UInt32

        @inlinable
        init(head: Int32, hashBits: UInt32) {
            self.head = head
            self.hashBits = hashBits
        }

        /// The head of a slot no identity has taken.
        @usableFromInline static let empty: Int32 = -1
        /// The head of a slot whose chain is used up.
        @usableFromInline static let usedUp: Int32 = -2
    }

    @usableFromInline var slots: [Slot]
    @usableFromInline let shift: Int

    /// A table for up to `count` identities, at most four fifths full.
    @inlinable
    init(capacityFor count: Int) {
        var bits = 3
        while (1 << bits) < count + count / 4 + 1 { bits += 1 }
        slots = [Slot](filling: Slot(head: Slot.empty, hashBits: 0), count: 1 << bits)
        shift = Int.bitWidth - bits
    }

    /// The slot of the identity hashed to `hash`, or the empty slot where it belongs: a slot
    /// whose hash bits match is taken when `hasIdentity` says its head element has it.
    @inlinable @inline(__always)
    func probe(hash: Int, hasIdentity: (Int) -> Bool) -> Int {
        let mask = slots.count - 1
        // Fibonacci hashing spreads identity hashes whose low bits are poorly mixed.
        let mixed = UInt(bitPattern: hash) &* 0x9E37_79B9_7F4A_7C15
        var index = Int(truncatingIfNeeded: mixed >> UInt(shift))
        let bits = UInt32(truncatingIfNeeded: mixed)
        while case let slot = slots[index], slot.head != Slot.empty {
            if slot.hashBits == bits && slot.head >= 0 && hasIdentity(Int(slot.head)) { return index }
            index = (index + 1) & mask
        }
        return index
    }

    /// Makes `element` (an index of `elements`), whose identity hashes to `hash`, the head of
    /// the chain of its identity and returns the previous head, or -1. Every push comes
    /// before the first ``setHead(_:at:)``.
    @inlinable
    mutating func push<Elements: DiffableElements>(_ element: Int, hash: Int, of elements: Elements) -> Int32 {
        let index = probe(hash: hash) { head in elements.hasIdentity(at: head, of: element, in: elements) }
        let previous = slots[index].head
        let bits = UInt32(truncatingIfNeeded: UInt(bitPattern: hash) &* 0x9E37_79B9_7F4A_7C15)
        slots[index] = Slot(head: Int32(element), hashBits: bits)
        return previous
    }

    /// The first unpaired element of `old` with the identity of `element` of `new`, hashed
    /// to `hash`, and its slot; nil when there is none.
    @inlinable
    func head<Elements: DiffableElements>(of element: Int, of new: Elements, hash: Int, in old: Elements) -> (head: Int32, slot: Int)? {
        let index = probe(hash: hash) { head in old.hasIdentity(at: head, of: element, in: new) }
        let head = slots[index].head
        return head < 0 ? nil : (head, index)
    }

    /// Adds `key`, hashed to `hash`, as a set of keys with no chains: beside any key of the
    /// same identity.
    @inlinable @inline(__always)
    mutating func insert(_ key: Int, hash: Int) {
        let index = probe(hash: hash) { _ in false }
        let bits = UInt32(truncatingIfNeeded: UInt(bitPattern: hash) &* 0x9E37_79B9_7F4A_7C15)
        slots[index] = Slot(head: Int32(key), hashBits: bits)
    }

    /// Whether a key inserted with `hash` has the identity `hasIdentity` looks for.
    @inlinable
    func contains(hash: Int, hasIdentity: (Int) -> Bool) -> Bool {
        slots[probe(hash: hash, hasIdentity: hasIdentity)].head != Slot.empty
    }

    /// Makes `element` (or, when it is -1, no element) the head of the chain in `slot`.
    @inlinable
    mutating func setHead(_ element: Int32, at slot: Int) {
        slots[slot].head = element < 0 ? Slot.usedUp : element
    }
}
