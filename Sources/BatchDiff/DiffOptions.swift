/// Choices a client makes about the batches it receives.
public struct DiffOptions: Hashable, Sendable {
    /// Whether the batch may contain moves. When `false`, every move (of a row or of a
    /// section) is sent as a delete plus an insert, for clients that cannot animate moves.
    public var allowsMoves: Bool

    @inlinable
    public init(allowsMoves: Bool = true) {
        self.allowsMoves = allowsMoves
    }
}
