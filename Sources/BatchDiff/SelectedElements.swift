/// Some elements of a collection, read where they lie: the element at position `i` is the
/// base's element at `positions[i]`. Pairing the rows left over across sections reads them
/// this way; copying them out retained and released each row's strings.
@usableFromInline
struct SelectedElements<Base: DiffableElements>: DiffableElements {
    @usableFromInline let base: Base
    @usableFromInline let positions: [Int]

    @inlinable
    init(_ base: Base, at positions: [Int]) {
        self.base = base
        self.positions = positions
    }

    @inlinable var count: Int { positions.count }

    @inlinable @inline(__always)
    func element(at position: Int) -> Base.Element { base.element(at: positions[position]) }

    @inlinable @inline(__always)
    func identityHash(at position: Int) -> Int { base.identityHash(at: positions[position]) }

    @inlinable @inline(__always)
    func hasIdentity(at position: Int, of otherPosition: Int, in other: Self) -> Bool {
        base.hasIdentity(at: positions[position], of: other.positions[otherPosition], in: other.base)
    }

    @inlinable @inline(__always)
    func hasContent(at position: Int, of otherPosition: Int, in other: Self) -> Bool {
        base.hasContent(at: positions[position], of: other.positions[otherPosition], in: other.base)
    }
}
