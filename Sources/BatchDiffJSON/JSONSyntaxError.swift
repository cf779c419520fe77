/// Why a text is not JSON: where, and what was expected there.
public struct JSONSyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The byte offset of the problem.
    public var offset: Int
    /// What is wrong, e.g. "expected ',' or ']' after an array element".
    public var reason: String

    public var description: String { "malformed JSON at byte \(offset): \(reason)" }
}
