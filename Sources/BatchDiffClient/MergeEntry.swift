import BatchDiff
import Foundation

/// How a `changes` answer carries the new content of reloaded rows and updated headers
/// (`values=`, docs/batch-format.md §6).
public enum FeedValues: String, Sendable {
    /// Each whole.
    case whole
    /// Each as an RFC 7396 merge patch of what the client holds, or whole where no patch
    /// says the change: about a tenth of the bytes when one member of ten changes.
    case merge
}

/// An entry of a `values=merge` answer: what the client merges into the content it holds.
public enum MergeEntry<Value> {
    /// `{"merge": P}`: P, the RFC 7396 merge patch from the content held to the new one.
    case merge(JSON)
    /// `{"item": I}`: the new content whole.
    case item(Value)

    /// Whether values of this type can be merged into: they encode to the JSON they were
    /// decoded from, and decode again (`Codable`, as ``JSON`` is).
    static var canMerge: Bool {
        Value.self is any Encodable.Type && Value.self is any Decodable.Type
    }

    /// The new content: the item, or the patch merged into `held()`, the content held (read
    /// only for a patch). Throws ``BatchError`` when a patch comes for content that is not
    /// an object, or for a type that is not `Codable`.
    func value(over held: () throws -> Value) throws -> Value {
        switch self {
        case .item(let value):
            return value
        case .merge(let patch):
            let old = try held()
            if let json = old as? JSON { return try Self.merged(json, patch) as! Value }
            guard let encodable = old as? any Encodable, let type = Value.self as? any Decodable.Type else {
                throw BatchError("a merge patch for a \(Value.self), which is not Codable: follow with values=whole")
            }
            let json = try JSONDecoder().decode(JSON.self, from: JSONEncoder().encode(encodable))
            return try JSONDecoder().decode(type, from: JSONEncoder().encode(try Self.merged(json, patch))) as! Value
        }
    }

    /// `patch` merged into `held`, which must be an object (a patch never comes for others).
    private static func merged(_ held: JSON, _ patch: JSON) throws -> JSON {
        guard case .object = held else { throw BatchError("a merge patch for content that is not an object: \(held)") }
        return held.merging(patch)
    }
}

extension MergeEntry: Sendable where Value: Sendable {}

extension MergeEntry: Decodable where Value: Decodable {
    private enum Keys: String, CodingKey {
        case merge, item
    }

    public init(from decoder: any Decoder) throws {
        let entry = try decoder.container(keyedBy: Keys.self)
        if entry.contains(.merge) {
            self = .merge(try entry.decode(JSON.self, forKey: .merge))
        } else {
            self = .item(try entry.decode(Value.self, forKey: .item))
        }
    }
}

/// The merge entries of a `values=merge` answer, aligned with `rows.reloaded` and
/// `sections.updated`; ``FeedChanges/applied(to:identity:)`` merges them into what is held.
public struct MergeEntries<Header, Item> {
    public var rows: [MergeEntry<Item>]
    public var headers: [MergeEntry<Header>]
}

extension MergeEntries: Sendable where Header: Sendable, Item: Sendable {}

extension JSON {
    /// RFC 7396: this value with `patch` merged in. A patch that is not an object replaces
    /// the value; an object's `null` members remove members, the others merge member by member.
    public func merging(_ patch: JSON) -> JSON {
        guard case .object(let changes) = patch else { return patch }
        var members: [String: JSON] = if case .object(let held) = self { held } else { [:] }
        for (name, change) in changes {
            if change == .null {
                members[name] = nil
            } else {
                members[name] = (members[name] ?? .null).merging(change)
            }
        }
        return .object(members)
    }
}
