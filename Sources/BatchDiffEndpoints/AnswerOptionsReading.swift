import BatchDiffJSON
import HTTPServer

/// `format`, `changedMembers`, `maxChanges` and `values` (docs/batch-format.md §6, §7), read
/// from a request: the query of a feed's `PUT` and `changes`, or `options` of `POST /diff`
/// (which has no `values`).
extension AnswerOptions {
    /// The options in `query`: `format=batch|steps|json-patch`, `changedMembers=true|false`,
    /// `maxChanges=N` (N ≥ 0), `values=whole|merge`.
    init(query: [String: String]) throws(Problem) {
        self.init()
        if let text = query["format"] {
            guard let format = Format(rawValue: text) else {
                throw Problem.badQuery("format: expected \(Self.formatNames), not \(text.prefix(40).debugDescription)")
            }
            self.format = format
        }
        if let value = try booleanParameter(query, "changedMembers") { changedMembers = value }
        if let text = query["maxChanges"] {
            guard let value = Int(text), value >= 0 else {
                throw Problem.badQuery("maxChanges: expected a non-negative integer, not \(text.prefix(40).debugDescription)")
            }
            maxChanges = value
        }
        if let text = query["values"] {
            guard let values = Values(rawValue: text) else {
                throw Problem.badQuery("values: expected \(Values.allCases.map(\.rawValue).joined(separator: " or ")), not \(text.prefix(40).debugDescription)")
            }
            self.values = values
        }
        if let mismatch = formatMismatch { throw Problem.badQuery(mismatch) }
    }

    /// Why the options do not go together: `changedMembers` belongs to the batch and steps
    /// formats (a JSON Patch replaces values, it names no members), `values=merge` to the
    /// batch format (steps and a JSON Patch carry their own values).
    var formatMismatch: String? {
        if changedMembers && format == .jsonPatch { return "changedMembers: belongs to the batch and steps formats, not \(format.rawValue)" }
        if values == .merge && format != .batch { return "values=merge: belongs to the batch format, not \(format.rawValue)" }
        return nil
    }

    /// The formats, for messages: "batch or steps".
    static var formatNames: String { Format.allCases.map(\.rawValue).joined(separator: " or ") }

    /// Reads `value`, the member `name` of `options` in a `POST /diff` body, when it is one
    /// of these options; returns false for other names.
    mutating func read(_ name: String, _ value: JSONValue) throws(Problem) -> Bool {
        switch name {
        case "format":
            guard let text = value.string, let format = Format(rawValue: text) else {
                throw Problem.invalidOption("options.format: expected \(Self.formatNames), found \(String(decoding: value.text.prefix(40), as: UTF8.self))")
            }
            self.format = format
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

/// The query parameter `name` of `query`, `true` or `false` (400 `invalid_query` for
/// anything else), when given.
func booleanParameter(_ query: [String: String], _ name: String) throws(Problem) -> Bool? {
    guard let text = query[name] else { return nil }
    guard let value = Bool(text) else { throw Problem.badQuery("\(name): expected true or false, not \(text.prefix(40).debugDescription)") }
    return value
}
