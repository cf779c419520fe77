/// An element the differ can match across two collections.
///
/// Two elements with equal ``identity`` are the same thing (the same row, the same section);
/// ``isContentEqual(to:)`` tells whether that thing's content changed between the collections.
public protocol Diffable {
    /// What makes two elements the same thing across the old and the new collection.
    associatedtype Identity: Hashable

    /// The element's identity.
    var identity: Identity { get }

    /// A hash of ``identity`` used to bucket elements while matching.
    ///
    /// The default is `identity.hashValue`; a `String` identity that equals an ASCII string is
    /// hashed faster, by its bytes (seeded per process), keeping `==`'s promise. Types whose
    /// identity is already a well-mixed fingerprint return part of it here and skip hashing
    /// altogether.
    var identityHash: Int { get }

    /// Whether `other`, an element with the same identity, has the same content.
    func isContentEqual(to other: Self) -> Bool
}

extension Diffable {
    @inlinable public var identityHash: Int { identity.hashValue }
}

extension Diffable where Self: Equatable {
    @inlinable public func isContentEqual(to other: Self) -> Bool { self == other }
}
