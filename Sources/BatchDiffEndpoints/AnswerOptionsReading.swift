import BatchDiffJSON
import HTTPServer

/// `changedMembers` and `maxChanges` (docs/batch-format.md §7), read from a request: the
/// query of a feed's `PUT` and `changes`, or `options` of `POST /diff`.
extension AnswerOptions {
    /// The options in `query`: `changedMembers=true|false`, `maxChanges=N` (N ≥ 0).
    init(query: [String: String]) throws(Problem) {
        self.init()
        if let text = query["changedMembers"] {
            guard let value = Bool(text) else {
                throw Problem.badQuery("changedMembers: expected true or false, not \(text.prefix(40).debugDescription)")
            }
            changedMembers = value
        }
        if let text = query["maxChanges"] {
            guard let value = Int(text), value >= 0 else {
                throw Problem.badQuery("maxChanges: expected a non-negative integer, not \(text.prefix(40).debugDescription)")
            }
            maxChanges = value
        }
    }

    /// Reads `value`, the member `name` of `options` in a `POST /diff` body, when it is one
    /// of these options; returns false for other names.
    mutating func read(_ name: String, _ value: JSONValue) throws(Problem) -> Bool {
        switch name {
        case "changedMembers":
            guard let flag = value.bool else { throw Problem.invalidOption("options.changedMembers: expected true or false, found \(value.kindName)") }
            changedMembers = flag
        case "maxChanges":
            guard let count = value.integer, count >= 0 else {
                throw Problem.invalidOption("options.maxChanges: expected a non-negative integer, found \(String(decoding: value.text.prefix(40), as: UTF8.self))")
            }
            maxChanges = count
        default:
            return false
        }
        return true
    }
}
