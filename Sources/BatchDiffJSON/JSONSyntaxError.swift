/// Why a text is not JSON, or not JSON every reader agrees on: where, and what was
/// expected there.
public struct JSONSyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The byte offset of the problem.
    public var offset: Int
    /// What is wrong, e.g. "expected ',' or ']' after an array element".
    public var reason: String
    /// The member an object names twice, as written, when that is the problem: readers
    /// disagree on which of its values wins, so such a text is refused.
    public var duplicateMember: String?

    /// The error at byte `offset`, `reason` saying what is wrong, and the member named twice
    /// when that is the problem.
    public init(offset: Int, reason: String, duplicateMember: String? = nil) {
        self.offset = offset
        self.reason = reason
        self.duplicateMember = duplicateMember
    }

    public var description: String {
        duplicateMember == nil ? "malformed JSON at byte \(offset): \(reason)" : "JSON at byte \(offset): \(reason)"
    }
}
