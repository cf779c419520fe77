/// Why a batch cannot be applied to a collection.
public struct BatchError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, e.g. "rows.deleted: [2, 7] is outside the old collection".
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
