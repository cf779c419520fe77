/// Elements the differ reads by position, from 0: an array, or a collection that keeps its
/// elements another way (column by column, say, to stay small).
///
/// The differ reads every element several times; a plain method reads it without the
/// accessor coroutine a generic collection's subscript costs.
public protocol DiffableElements<Element> {
    associatedtype Element: Diffable
    /// How many elements there are.
    var count: Int { get }
    /// The element at `position`, one of `0..<count`.
    func element(at position: Int) -> Element
    /// The ``Diffable/identityHash`` of the element at `position`.
    ///
    /// The default reads ``element(at:)``; an array reads the element where it lies, so a
    /// row's other stored references (its content's strings, say) are not retained and
    /// released for it.
    func identityHash(at position: Int) -> Int
    /// Whether the element at `position` has the identity of `other`'s element at
    /// `otherPosition`; read as ``identityHash(at:)`` reads.
    func hasIdentity(at position: Int, of otherPosition: Int, in other: Self) -> Bool
    /// Whether the element at `position` has the content of `other`'s element at
    /// `otherPosition` (``Diffable/isContentEqual(to:)``); read as ``identityHash(at:)`` reads.
    func hasContent(at position: Int, of otherPosition: Int, in other: Self) -> Bool
}

extension DiffableElements {
    @inlinable @inline(__always)
    public func identityHash(at position: Int) -> Int { element(at: position).identityHash }

    @inlinable @inline(__always)
    public func hasIdentity(at position: Int, of otherPosition: Int, in other: Self) -> Bool {
        element(at: position).identity == other.element(at: otherPosition).identity
    }

    @inlinable @inline(__always)
    public func hasContent(at position: Int, of otherPosition: Int, in other: Self) -> Bool {
        element(at: position).isContentEqual(to: other.element(at: otherPosition))
    }
}

extension Array: DiffableElements where Element: Diffable {
    @inlinable @inline(__always)
    public func element(at position: Int) -> Element { self[position] }

    @inlinable @inline(__always)
    public func identityHash(at position: Int) -> Int { self[position].identityHash }

    @inlinable @inline(__always)
    public func hasIdentity(at position: Int, of otherPosition: Int, in other: Self) -> Bool {
        self[position].identity == other[otherPosition].identity
    }

    @inlinable @inline(__always)
    public func hasContent(at position: Int, of otherPosition: Int, in other: Self) -> Bool {
        self[position].isContentEqual(to: other[otherPosition])
    }
}
