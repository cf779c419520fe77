/// Some elements of a collection left unpaired, read where they lie: the element at
/// position `i` is the base's element at `positions[i]`. Pairing the rows left over across
/// sections reads them this way; copying them out retained and released each row's strings.
///
/// Their identity hashes are 31 bits (``Pairing/keptBits(of:)``): those their entries in a
/// pairing before kept (`entries`, by the base's index), computed for the others.
@usableFromInline
struct SelectedElements<Base: DiffableElements>: DiffableElements {
    @usableFromInline let base: Base
    @usableFromInline let positions: [Int]
    @usableFromInline let entries: [Int32]

    @inlinable
    init(_ base: Base, at positions: [Int], entries: [Int32]) {
        self.base = base
        self.positions = positions
        self.entries = entries
    }

    @inlinable var count: Int { positions.count }

    @inlinable @inline(__always)
    func element(at position: Int) -> Base.Element { base.element(at: positions[position]) }

    @inlinable @inline(__always)
    func identityHash(at position: Int) -> Int {
        let index = positions[position]
        return Pairing.keptHash(in: entries[index], of: index, in: base)
    }

    @inlinable @inline(__always)
    func hasIdentity(at position: Int, of otherPosition: Int, in other: Self) -> Bool {
        base.hasIdentity(at: positions[position], of: other.positions[otherPosition], in: other.base)
    }

    @inlinable @inline(__always)
    func hasContent(at position: Int, of otherPosition: Int, in other: Self) -> Bool {
        base.hasContent(at: positions[position], of: other.positions[otherPosition], in: other.base)
    }
}
