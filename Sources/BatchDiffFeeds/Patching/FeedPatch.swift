import BatchDiffJSON
import Gzip

/// A `PATCH` of a feed: ops that change its collection by identity, applied in order, all
/// or nothing (docs/feeds.md §3), read from `{"ops": [Op, ...]}`. Identities are read with
/// the feed's identity member when the ops are applied (``PatchedCollection``).
package struct FeedPatch: Sendable {
    /// Where an op puts a row (among its section's rows) or a section (among the sections).
    enum Position: Sendable {
        case start
        case end
        case before(JSONValue)
        case after(JSONValue)
    }

    /// One op; `section` names a row's section in a sectioned feed.
    enum Op: Sendable {
        case upsert(item: JSONValue, section: JSONValue?, position: Position?)
        /// An RFC 7396 merge patch to an existing row's content (``MergedRow``).
        case merge(id: JSONValue, patch: JSONValue, section: JSONValue?)
        case remove(id: JSONValue, section: JSONValue?)
        case move(id: JSONValue, section: JSONValue?, position: Position)
        case upsertSection(item: JSONValue, position: Position?)
        case removeSection(id: JSONValue)
        case moveSection(id: JSONValue, position: Position)
    }

    let ops: [Op]
    /// The text the ops' items are written from, without whitespace.
    let text: [UInt8]
    /// A checksum of the body without its whitespace, the same in every server (what an
    /// `Idempotency-Key` is kept with).
    let checksum: UInt64

    /// The ops of the JSON text `body`: ``FeedError/malformedJSON(_:)`` when it is not JSON
    /// (or an object names a member twice), ``FeedError/invalidSnapshot(_:)`` when it is not
    /// `{"ops": [...]}`, ``FeedError/patchRefused(_:)`` (`invalidShape`, with its index) for
    /// an op of unknown form.
    package init(body: [UInt8]) throws(FeedError) {
        var document: JSONDocument
        do {
            document = try JSONDocument(bytes: body, refusingRepeatedMembers: true)
            // Read again without whitespace, so that the items it writes into the feed's
            // compact text keep it compact (and it is read once).
            if !document.isCompact { document = try JSONDocument(bytes: document.compactText) }
        } catch {
            throw .malformedJSON(error)
        }
        let root = document.root
        guard root.isObject, let ops = root.member(named: "ops"), ops.isArray else {
            throw .invalidSnapshot("a PATCH body is {\"ops\": [...]}, an object with an array of ops; found \(root.kindName)")
        }
        if let other = root.members.first(where: { $0.key.string != "ops" }) {
            throw .invalidSnapshot("a PATCH body is {\"ops\": [...]}; it has no member \(String(decoding: other.key.text, as: UTF8.self))")
        }
        var read: [Op] = []
        for (index, op) in ops.elements.enumerated() { read.append(try Self.op(op, at: index)) }
        self.ops = read
        text = document.bytes
        checksum = Gzip.checksum(document.bytes)
    }

    /// The members each op takes, `op` aside.
    private static let members: [String: Set<String>] = [
        "upsert": ["item", "section", "before", "after", "at"],
        "merge": ["id", "patch", "section"],
        "remove": ["id", "section"],
        "move": ["id", "section", "before", "after", "at"],
        "upsertSection": ["item", "before", "after", "at"],
        "removeSection": ["id"],
        "moveSection": ["id", "before", "after", "at"],
    ]

    private static func op(_ value: JSONValue, at index: Int) throws(FeedError) -> Op {
        func refused(_ detail: String) -> FeedError { .patchRefused(PatchRefusal(.invalidShape, op: index, detail)) }
        guard let name = value.member(named: "op")?.string, let allowed = members[name] else {
            throw refused("an op is an object whose \"op\" is upsert, merge, remove, move, upsertSection, removeSection or moveSection; found \(describe(value))")
        }
        for (key, _) in value.members {
            guard let key = key.string, key == "op" || allowed.contains(key) else {
                throw refused("\(name) takes no member \(String(decoding: key.text, as: UTF8.self)); it takes \(allowed.sorted().joined(separator: ", "))")
            }
        }
        func required(_ member: String) throws(FeedError) -> JSONValue {
            guard let found = value.member(named: member) else { throw refused("\(name) needs \"\(member)\"") }
            return found
        }
        let position = try Self.position(of: value, op: name, at: index)
        func requiredPosition() throws(FeedError) -> Position {
            guard let position else { throw refused("\(name) needs one of \"before\", \"after\" and \"at\"") }
            return position
        }
        let section = value.member(named: "section")
        switch name {
        case "upsert": return .upsert(item: try required("item"), section: section, position: position)
        case "merge": return .merge(id: try required("id"), patch: try required("patch"), section: section)
        case "remove": return .remove(id: try required("id"), section: section)
        case "move": return .move(id: try required("id"), section: section, position: try requiredPosition())
        case "upsertSection":
            let item = try required("item")
            guard item.isObject else { throw refused("upsertSection's item is a section's header, an object; found \(item.kindName)") }
            return .upsertSection(item: item, position: position)
        case "removeSection": return .removeSection(id: try required("id"))
        default: return .moveSection(id: try required("id"), position: try requiredPosition())
        }
    }

    /// The position members of op `value` (at most one of `before`, `after`, `at`).
    private static func position(of value: JSONValue, op name: String, at index: Int) throws(FeedError) -> Position? {
        let given = [("before", value.member(named: "before")), ("after", value.member(named: "after")), ("at", value.member(named: "at"))]
            .filter { $0.1 != nil }
        guard given.count <= 1 else {
            throw .patchRefused(PatchRefusal(.invalidShape, op: index, "\(name) takes one of \"before\", \"after\" and \"at\", not \(given.count)"))
        }
        guard let (member, anchor) = given.first, let anchor else { return nil }
        switch member {
        case "before": return .before(anchor)
        case "after": return .after(anchor)
        default:
            switch anchor.string {
            case "start": return .start
            case "end": return .end
            default: throw .patchRefused(PatchRefusal(.invalidShape, op: index, "\"at\" is \"start\" or \"end\", not \(describe(anchor))"))
            }
        }
    }

    /// The identities of the rows the ops change, insert, move or remove (not those they
    /// stand beside, nor a new section's), and of the sections they name, read with the
    /// identity member `idKey`: what a patch looks up before it changes anything.
    func targets(idKey: String) -> (rows: Set<Fingerprint>, sections: Set<Fingerprint>) {
        var rows = Set<Fingerprint>()
        var sections = Set<Fingerprint>()
        for op in ops {
            switch op {
            case .upsert(let item, let section, _):
                rows.insert(item.itemIdentity(idKey: idKey))
                if let section { sections.insert(section.fingerprint) }
            case .remove(let id, let section), .move(let id, let section, _), .merge(let id, _, let section):
                rows.insert(id.fingerprint)
                if let section { sections.insert(section.fingerprint) }
            case .upsertSection(let item, _): sections.insert(item.sectionIdentity(idKey: idKey))
            case .removeSection(let id), .moveSection(let id, _): sections.insert(id.fingerprint)
            }
        }
        return (rows, sections)
    }

    /// A value for a message: its text, cut short.
    static func describe(_ value: JSONValue) -> String {
        let text = String(decoding: value.text, as: UTF8.self)
        return text.count > 80 ? text.prefix(80) + "…" : text
    }
}

/// Why a patch was refused: which op, and what is wrong with it (docs/feeds.md §3).
package struct PatchRefusal: Sendable, Equatable {
    /// What is wrong (each a problem code of the contract, docs/errors.md §3).
    package enum Reason: Sendable {
        /// An op names an identity the feed lacks (a row, or a section).
        case identityNotFound
        /// A `before` or `after` names a row (or section) that is not there.
        case anchorNotFound
        /// The op would repeat an identity in a feed that keeps them unique, or names one
        /// that repeats in the feed.
        case duplicateIdentity
        /// An op of unknown form, or of the other shape of feed, or one that places a row
        /// (section) of a sorted feed.
        case invalidShape
        /// A row (section header) of a sorted feed whose key member holds an array or an object.
        case invalidSortKey
    }

    /// What is wrong.
    package var reason: Reason
    /// The 0-based index of the op.
    package var op: Int
    /// What is wrong with the op, for a person.
    package var detail: String

    /// The refusal of op `op` for `reason`, described by `detail`.
    package init(_ reason: Reason, op: Int, _ detail: String) {
        self.reason = reason
        self.op = op
        self.detail = detail
    }
}
