import BatchDiff

/// One side of a JSON Patch: the collection, the JSON text its items' spans point into,
/// and the collection's value (a sectioned collection's members outside `sections` are
/// patched too).
public struct PatchSide {
    public var collection: JSONCollection
    public var text: [UInt8]
    public var value: JSONValue

    public init(collection: JSONCollection, text: [UInt8], value: JSONValue) {
        self.collection = collection
        self.text = text
        self.value = value
    }
}

/// One operation of an RFC 6902 JSON Patch; values are JSON texts.
enum PatchOperation {
    case add(path: String, value: ArraySlice<UInt8>)
    case remove(path: String)
    case replace(path: String, value: ArraySlice<UInt8>)
    case move(from: String, path: String)
}

extension JSONOutput {
    /// Appends the RFC 6902 JSON Patch that turns `old` into `new`, `batch` the batch between
    /// them (docs/batch-format.md §7): paths `/3` for lists; for sections, `/sections/2`,
    /// `/sections/2/items/4` and `/sections/2/title`. A changed row is replaced whole; a
    /// changed header or member outside `sections`, member by member; a new section is added
    /// whole. The operations follow the batch's steps, so the patch is about the size of
    /// what changed.
    public mutating func jsonPatch(_ batch: JSONBatch, from old: PatchSide, to new: PatchSide) throws {
        write(try PatchOperation.operations(batch, from: old, to: new))
    }

    /// Appends the JSON Patch of list `batch`, whose new elements' texts `value(p)` gives
    /// by new position (a list needs nothing of the old side: a changed row is replaced whole).
    public mutating func jsonPatch(_ batch: ListBatch, values value: (Int) -> ArraySlice<UInt8>) throws {
        write(PatchOperation.rows(try batch.steps(), at: "", value: value))
    }

    private mutating func write(_ operations: [PatchOperation]) {
        array(operations) { output, operation in
            output.object { output in
                switch operation {
                case .add(let path, let value), .replace(let path, let value):
                    output.key("op")
                    output.string(operation.name)
                    output.key("path")
                    output.string(path)
                    output.key("value")
                    output.value(text: value)
                case .remove(let path):
                    output.key("op")
                    output.string("remove")
                    output.key("path")
                    output.string(path)
                case .move(let from, let path):
                    output.key("op")
                    output.string("move")
                    output.key("from")
                    output.string(from)
                    output.key("path")
                    output.string(path)
                }
            }
        }
    }
}

extension PatchOperation {
    var name: String {
        switch self {
        case .add: "add"
        case .remove: "remove"
        case .replace: "replace"
        case .move: "move"
        }
    }

    /// The operations from `old` to `new`: for sections, members outside `sections` first,
    /// then each staying section's header members and rows at its old index, then the
    /// sections themselves.
    static func operations(_ batch: JSONBatch, from old: PatchSide, to new: PatchSide) throws -> [PatchOperation] {
        switch (batch, old.collection, new.collection) {
        case (.list(let batch), .list, .list(let items)):
            return rows(try batch.steps(), at: "") { new.text[items[$0].span] }
        case (.sectioned(let batch), .sectioned(let oldSections), .sectioned(let newSections)):
            var operations = try members(of: old.value, new.value, at: "", ignoring: "sections")
            let steps = try batch.nestedSteps()
            let updated = Set(batch.sections.updated)
            for (oldSection, newSection, rowSteps) in steps.rows {
                let base = "/sections/\(oldSection)"
                if updated.contains(newSection) {
                    operations += try members(
                        of: try JSONDocument(bytes: Array(old.text[oldSections[oldSection].header.span])).root,
                        try JSONDocument(bytes: Array(new.text[newSections[newSection].header.span])).root,
                        at: base, ignoring: "items"
                    )
                }
                operations += rows(rowSteps, at: base + "/items") { new.text[newSections[newSection].items[$0].span] }
            }
            return operations + rows(steps.sections, at: "/sections") { new.text[newSections[$0].header.span] }
        default:
            throw BatchError("a batch of another shape than its collections")
        }
    }

    /// The operations of `steps` on the array at `base`; `value(p)` is the new element at
    /// position `p`.
    static func rows(_ steps: [Step], at base: String, value: (Int) -> ArraySlice<UInt8>) -> [PatchOperation] {
        steps.flatMap { step -> [PatchOperation] in
            switch step {
            case .remove(let at, let count): Array(repeating: .remove(path: "\(base)/\(at)"), count: count)
            case .insert(let at, let count): (at..<(at + count)).map { .add(path: "\(base)/\($0)", value: value($0)) }
            case .change(let at, let count): (at..<(at + count)).map { .replace(path: "\(base)/\($0)", value: value($0)) }
            case .move(let from, let to): [.move(from: "\(base)/\(from)", path: "\(base)/\(to)")]
            }
        }
    }

    /// The operations that turn the members of object `old` into those of `new`, at
    /// `base`, the member `ignoring` aside. Names compare by their Unicode scalars (their
    /// fingerprints), never by canonical equivalence: `café` and `cafe\u{301}` are two
    /// members, as JSON Patch appliers read them.
    private static func members(of old: JSONValue, _ new: JSONValue, at base: String, ignoring: String) throws -> [PatchOperation] {
        let ignored = Fingerprint.string(ignoring)
        func byName(_ value: JSONValue) -> [Fingerprint: (name: String, value: JSONValue)] {
            var members: [Fingerprint: (name: String, value: JSONValue)] = [:]
            for (key, member) in value.members where key.fingerprint != ignored {
                if let name = key.string { members[key.fingerprint] = (name, member) }
            }
            return members
        }
        /// By the names' scalars, so that the patch is the same whatever order they came in.
        func sorted(_ members: [Fingerprint: (name: String, value: JSONValue)]) -> [(key: Fingerprint, value: (name: String, value: JSONValue))] {
            members.sorted { $0.value.name.unicodeScalars.lexicographicallyPrecedes($1.value.name.unicodeScalars) { $0.value < $1.value } }
        }
        let (before, after) = (byName(old), byName(new))
        var operations: [PatchOperation] = []
        for (key, member) in sorted(before) where after[key] == nil {
            operations.append(.remove(path: "\(base)/\(pointerToken(member.name))"))
        }
        for (key, member) in sorted(after) {
            let path = "\(base)/\(pointerToken(member.name))"
            if let previous = before[key] {
                if previous.value.fingerprint != member.value.fingerprint { operations.append(.replace(path: path, value: member.value.text)) }
            } else {
                operations.append(.add(path: path, value: member.value.text))
            }
        }
        return operations
    }

    /// `name` as a JSON Pointer reference token (RFC 6901: `~` as `~0`, `/` as `~1`).
    private static func pointerToken(_ name: String) -> String {
        // By Unicode scalar: a `/` followed by a combining mark is still a `/`.
        var token = String.UnicodeScalarView()
        for scalar in name.unicodeScalars {
            switch scalar {
            case "~": token.append(contentsOf: "~0".unicodeScalars)
            case "/": token.append(contentsOf: "~1".unicodeScalars)
            default: token.append(scalar)
            }
        }
        return String(token)
    }
}
