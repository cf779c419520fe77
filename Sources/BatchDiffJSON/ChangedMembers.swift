/// For each content change of a batch, the top-level members that changed
/// (docs/batch-format.md §6): a client rebinds only those fields.
public struct ChangedMembers: Sendable, Equatable {
    /// Aligned with `rows.reloaded`: the member names whose values differ between the old
    /// and the new row, sorted by Unicode code points, or `nil` when either is not an object.
    public var rows: [[String]?]
    /// Aligned with `sections.updated`, likewise for section headers (`items` never counts).
    public var sections: [[String]?]

    /// Changed members given as they are, aligned with a batch's lists.
    public init(rows: [[String]?], sections: [[String]?]) {
        self.rows = rows
        self.sections = sections
    }

    /// The changed members of `batch`, which turns `old` into `new`: collections read from
    /// the JSON texts `oldText` and `newText`, whose items' spans point into them.
    public init(of batch: JSONBatch, old: JSONCollection, oldText: [UInt8], new: JSONCollection, newText: [UInt8]) throws {
        let changes = try ContentChanges(of: batch, old: old, oldText: oldText, new: new, newText: newText)
        rows = changes.rows.map { Self.names($0.old, $0.new, ignoring: nil) }
        sections = changes.sections.map { Self.names($0.old, $0.new, ignoring: "items") }
    }

    /// The names of the members that differ between the objects `old` and `new` (JSON
    /// texts), `ignoring` aside; `nil` when either is not an object.
    static func names(_ old: ArraySlice<UInt8>, _ new: ArraySlice<UInt8>, ignoring: String?) -> [String]? {
        guard let oldMembers = members(old, ignoring: ignoring), let newMembers = members(new, ignoring: ignoring) else { return nil }
        var changed: [String] = []
        for (key, member) in oldMembers where newMembers[key]?.value != member.value { changed.append(member.name) }
        for (key, member) in newMembers where oldMembers[key] == nil { changed.append(member.name) }
        return changed.sorted { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) { $0.value < $1.value } }
    }

    /// The members of the object in `text` by name: the name, and the fingerprint of its
    /// values (a name that repeats counts each of its values, as object equality does).
    private static func members(_ text: ArraySlice<UInt8>, ignoring: String?) -> [Fingerprint: (name: String, value: Fingerprint)]? {
        guard let root = try? JSONDocument(bytes: Array(text)).root, root.isObject else { return nil }
        var members: [Fingerprint: (name: String, value: Fingerprint)] = [:]
        let ignored = ignoring.map(Fingerprint.string)
        for (key, value) in root.members where key.fingerprint != ignored {
            guard let name = key.string else { continue }
            let entry = members[key.fingerprint]
            members[key.fingerprint] = (name, (entry?.value ?? Fingerprint(high: 0, low: 0)) &+ Fingerprint.member(key: key.fingerprint, value: value.fingerprint))
        }
        return members
    }
}
