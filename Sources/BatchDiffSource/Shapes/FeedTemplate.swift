import BatchDiffFeeds

/// A shape's feed-id template: feed-id characters and `{name}` placeholders
/// (`"todos-{owner}"`, `"leaderboard"`). An id matches when the template's literal parts
/// stand in it in order and each placeholder takes at least one character; a placeholder
/// followed by a literal takes the characters up to that literal's first occurrence, the
/// last one takes the rest. Filling the placeholders with values that would read back
/// otherwise makes no id (``id(filling:)``), so a row belongs to one feed of a shape at most.
struct FeedTemplate: Hashable, Sendable, CustomStringConvertible {
    enum Part: Hashable, Sendable {
        case literal(String)
        case placeholder(String)
    }

    let parts: [Part]
    let description: String

    /// The template `text`; throws a sentence saying what is wrong with it.
    init(_ text: String) throws(ShapeError) {
        var parts: [Part] = []
        var rest = Substring(text)
        while !rest.isEmpty {
            if rest.first == "{" {
                guard let close = rest.firstIndex(of: "}") else { throw ShapeError("feed template \"\(text)\" opens a placeholder it does not close") }
                let name = String(rest[rest.index(after: rest.startIndex)..<close])
                guard !name.isEmpty, name.utf8.allSatisfy({ FeedID.isNameByte($0) }) else {
                    throw ShapeError("feed template \"\(text)\" has a placeholder \"{\(name)}\" that is not a name")
                }
                if case .placeholder = parts.last { throw ShapeError("feed template \"\(text)\" has two placeholders with nothing between them") }
                parts.append(.placeholder(name))
                rest = rest[rest.index(after: close)...]
            } else {
                let literal = rest.prefix { $0 != "{" }
                guard literal.utf8.allSatisfy({ FeedID.isNameByte($0) }) else {
                    throw ShapeError("feed template \"\(text)\" holds a character feed ids do not (A-Z a-z 0-9 . _ -)")
                }
                parts.append(.literal(String(literal)))
                rest = rest.dropFirst(literal.count)
            }
        }
        guard !parts.isEmpty else { throw ShapeError("a feed template is empty") }
        self.parts = parts
        description = text
    }

    /// The placeholders' names, in order.
    var placeholders: [String] {
        parts.compactMap { if case .placeholder(let name) = $0 { name } else { nil } }
    }

    /// The literal text every id of this template begins with.
    var prefix: String {
        if case .literal(let text) = parts.first { text } else { "" }
    }

    /// The literal text every id of this template ends with.
    private var suffix: String {
        if case .literal(let text) = parts.last, parts.count > 1 || placeholders.isEmpty { text } else { "" }
    }

    /// The placeholders' values in `id`, by name, or `nil` when `id` does not match.
    func values(in id: String) -> [String: String]? {
        var values: [String: String] = [:]
        var rest = Substring(id)
        for (index, part) in parts.enumerated() {
            switch part {
            case .literal(let text):
                guard rest.hasPrefix(text) else { return nil }
                rest = rest.dropFirst(text.count)
            case .placeholder(let name):
                let value: Substring
                if index + 1 < parts.count, case .literal(let next) = parts[index + 1] {
                    guard let found = rest.dropFirst().range(of: next) else { return nil }
                    value = rest[..<found.lowerBound]
                } else {
                    value = rest
                }
                guard !value.isEmpty, values[name].map({ $0 == value }) ?? true else { return nil }
                values[name] = String(value)
                rest = rest.dropFirst(value.count)
            }
        }
        return rest.isEmpty ? values : nil
    }

    /// The id the template makes with `values` (one for every placeholder), or `nil` when
    /// it would not read back as them (a value empty, holding characters ids do not, or a
    /// literal that follows it).
    func id(filling values: [String: String]) -> String? {
        var id = ""
        for part in parts {
            switch part {
            case .literal(let text): id += text
            case .placeholder(let name):
                guard let value = values[name] else { return nil }
                id += value
            }
        }
        guard let read = self.values(in: id), read == values.filter({ placeholders.contains($0.key) }), (try? FeedID(id)) != nil else { return nil }
        return id
    }

    /// Whether some id could match both templates. Told apart only by their literal
    /// beginnings or endings (one not a prefix of the other): templates that share both
    /// are taken to overlap.
    func mayOverlap(_ other: FeedTemplate) -> Bool {
        if placeholders.isEmpty && other.placeholders.isEmpty { return description == other.description }
        if placeholders.isEmpty { return other.values(in: description) != nil }
        if other.placeholders.isEmpty { return values(in: other.description) != nil }
        let prefixesAgree = prefix.hasPrefix(other.prefix) || other.prefix.hasPrefix(prefix)
        let suffixesAgree = suffix.hasSuffix(other.suffix) || other.suffix.hasSuffix(suffix)
        return prefixesAgree && suffixesAgree
    }
}

/// A shape that cannot be served: the sentence names the shape and what is wrong.
package struct ShapeError: Error, Equatable, CustomStringConvertible {
    package let description: String

    init(_ description: String) {
        self.description = description
    }
}
