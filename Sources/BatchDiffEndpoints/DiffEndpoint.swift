import BatchDiff
import BatchDiffJSON
import HTTPServer

extension BatchDiffService {
    /// `POST /diff`: `{"old": …, "new": …, "options": {"idKey": "id", "moves": true,
    /// "uniqueIdentities": false, "orderBy": "-score,id", "sectionOrderBy": "name",
    /// "format": "batch", "changedMembers": false, "maxChanges": N}}`.
    func diff(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        // `old` and `new` are read as the body is parsed, with the default identity member;
        // a body whose options name another is read again with it. Each reading ends with
        // its turn of the loop, so the first (its document included) is gone before the
        // second is made.
        var idKey = "id"
        while true {
            var body = try Self.readBody(request, idKey: idKey)
            if body.idKey == idKey {
                try Self.sort(&body, text: request.body)
                if body.uniqueIdentities, let repeated = body.old.firstRepeatedIdentity(path: "old") ?? body.new.firstRepeatedIdentity(path: "new") {
                    throw Problem.duplicateIdentity("options.uniqueIdentities: \(repeated)")
                }
                return try Self.batchAnswer(body, text: request.body)
            }
            idKey = body.idKey
        }
    }

    /// What a `POST /diff` body asks for, its collections read with the identity member
    /// `readWith` (which may differ from the `idKey` it asks for).
    private struct DiffBody {
        var old: JSONCollection
        var new: JSONCollection
        /// The values `old` and `new` were read from (a JSON Patch patches them whole).
        var oldValue: JSONValue
        var newValue: JSONValue
        var idKey: String
        var options: DiffOptions
        var answer: AnswerOptions
        /// Whether `old` and `new` must each keep their identities unique.
        var uniqueIdentities: Bool
        /// The order both sides are put in before the diff.
        var order: CollectionOrder
    }

    /// Puts both sides of `body` in the order it asks for (read from `text`, the body).
    private static func sort(_ body: inout DiffBody, text: [UInt8]) throws(Problem) {
        guard !body.order.isEmpty else { return }
        if body.order.sections != nil {
            for (name, side) in [("old", body.old), ("new", body.new)] {
                guard case .list = side else { continue }
                throw Problem.wrongShape("options.sectionOrderBy: \(name) is a list, which has no sections")
            }
        }
        do throws(CollectionSortError) {
            body.old = try body.old.sorted(body.order, idKey: body.idKey, text: text, path: "old") ?? body.old
            body.new = try body.new.sorted(body.order, idKey: body.idKey, text: text, path: "new") ?? body.new
        } catch {
            throw Problem.invalidSortKey(error.description)
        }
    }

    private static func readBody(_ request: HTTPRequest, idKey readWith: String) throws(Problem) -> DiffBody {
        let root = try readJSON(request, collections: .rootMembers(["old", "new"]), idKey: readWith).root
        guard root.isObject else { throw Problem.wrongShape("body: expected an object with \"old\" and \"new\", found \(root.kindName)") }
        var old: JSONValue?
        var new: JSONValue?
        var options: JSONValue?
        // A member named twice was refused as the body was parsed (400 duplicate_member).
        for (key, value) in root.members {
            switch key.string {
            case "old": old = value
            case "new": new = value
            case "options": options = value
            case let name: throw Problem.wrongShape("body: unknown member \(Self.quoted(name)); expected old, new, options")
            }
        }
        guard let old else { throw Problem.wrongShape("body: the member \"old\" is missing") }
        guard let new else { throw Problem.wrongShape("body: the member \"new\" is missing") }
        let (idKey, diffOptions, answerOptions, uniqueIdentities, order) = try Self.options(options)
        do {
            return DiffBody(
                old: try old.collection(idKey: readWith, path: "old"), new: try new.collection(idKey: readWith, path: "new"),
                oldValue: old, newValue: new, idKey: idKey, options: diffOptions, answer: answerOptions, uniqueIdentities: uniqueIdentities,
                order: order
            )
        } catch {
            throw Problem.wrongShape(error)
        }
    }

    /// The answer: the batch from `old` to `new` as the options ask for it; `text` is the
    /// body both were read from (the changed members are read from it).
    private static func batchAnswer(_ body: DiffBody, text: [UInt8]) throws(Problem) -> HTTPResponse {
        let batch: JSONBatch
        do {
            batch = try JSONBatch(from: body.old, to: body.new, options: body.options)
        } catch {
            throw Problem.wrongShape(error)
        }
        var changed: ChangedMembers?
        if body.answer.changedMembers && !body.answer.reloads(batch) {
            do {
                changed = try ChangedMembers(of: batch, old: body.old, oldText: text, new: body.new, newText: text)
            } catch {
                throw Problem.internalError("the changed members of a batch: \(error)")
            }
        }
        var output = JSONOutput(capacity: 4096)
        do {
            if body.answer.format == .jsonPatch && !body.answer.reloads(batch) {
                try output.jsonPatch(
                    batch, from: PatchSide(collection: body.old, text: text, value: body.oldValue),
                    to: PatchSide(collection: body.new, text: text, value: body.newValue)
                )
                return HTTPResponse(status: 200, headers: [("Content-Type", "application/json-patch+json")], body: output.bytes)
            }
            try output.batch(batch, options: body.answer, changedMembers: changed)
        } catch {
            throw Problem.internalError("writing the answer: \(error)")
        }
        return .json(200, output.bytes)
    }

    /// Reads `options`: `idKey` (a non-empty string), `moves` and `uniqueIdentities`
    /// (Booleans), `orderBy` and `sectionOrderBy` (an order as a feed's query writes it, or
    /// an array of its keys), and the answer options `format`, `changedMembers` and
    /// `maxChanges`. Anything else is a 400 naming the member.
    private static func options(
        _ value: JSONValue?
    ) throws(Problem) -> (idKey: String, options: DiffOptions, answer: AnswerOptions, uniqueIdentities: Bool, order: CollectionOrder) {
        var idKey = "id"
        var options = DiffOptions()
        var answer = AnswerOptions()
        var uniqueIdentities = false
        var order = CollectionOrder()
        guard let value else { return (idKey, options, answer, uniqueIdentities, order) }
        guard value.isObject else { throw Problem.invalidOption("options: expected an object, found \(value.kindName)") }
        for (key, member) in value.members {
            let name = key.string
            switch name {
            case "idKey":
                guard let text = member.string, !text.isEmpty else {
                    throw Problem.invalidOption("options.idKey: expected a non-empty string, found \(member.kindName)")
                }
                idKey = text
            case "moves":
                guard let moves = member.bool else { throw Problem.invalidOption("options.moves: expected true or false, found \(member.kindName)") }
                options.allowsMoves = moves
            case "uniqueIdentities":
                guard let unique = member.bool else {
                    throw Problem.invalidOption("options.uniqueIdentities: expected true or false, found \(member.kindName)")
                }
                uniqueIdentities = unique
            case "orderBy":
                order.rows = try Self.sortOrder(member, option: "orderBy")
            case "sectionOrderBy":
                order.sections = try Self.sortOrder(member, option: "sectionOrderBy")
            case let name? where try answer.read(name, member):
                continue
            default:
                throw Problem.invalidOption(
                    "options: unknown member \(Self.quoted(name)); expected idKey, moves, uniqueIdentities, orderBy, sectionOrderBy, format, changedMembers, maxChanges"
                )
            }
        }
        if let mismatch = answer.formatMismatch { throw Problem.invalidOption("options.\(mismatch)") }
        return (idKey, options, answer, uniqueIdentities, order)
    }

    /// The order `member` writes: `"-score,id"`, or `["-score", "id"]`.
    private static func sortOrder(_ member: JSONValue, option: String) throws(Problem) -> SortOrder {
        var written = member.string
        if member.isArray {
            let names = member.elements.compactMap(\.string)
            let whole = !names.isEmpty && names.count == member.elements.count && !names.contains { $0.contains(",") }
            written = whole ? names.joined(separator: ",") : nil
        }
        guard let written else {
            throw Problem.invalidOption("options.\(option): expected a string like \"-score,id\" or an array of member names, found \(member.kindName)")
        }
        do throws(SortOrderError) {
            return try SortOrder(parsing: written)
        } catch {
            throw Problem.invalidOption("options.\(option): \(error)")
        }
    }

    /// A member's name as an error names it: quoted, or `?` when it is not valid text.
    private static func quoted(_ name: String?) -> String {
        name.map { $0.debugDescription } ?? "?"
    }
}
