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
}

extension Array: DiffableElements where Element: Diffable {
    @inlinable @inline(__always)
    public func element(at position: Int) -> Element { self[position] }
}
