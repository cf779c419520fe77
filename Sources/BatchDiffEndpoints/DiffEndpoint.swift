import BatchDiff
import BatchDiffJSON
import HTTPServer

extension BatchDiffService {
    /// `POST /diff`: `{"old": …, "new": …, "options": {"idKey": "id", "moves": true}}`.
    func diff(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let root = try Self.readJSON(request).root
        guard root.isObject else { throw Problem.wrongShape("body: expected an object with \"old\" and \"new\", found \(root.kindName)") }
        var old: JSONValue?
        var new: JSONValue?
        var options: JSONValue?
        for (key, value) in root.members {
            switch key.string {
            case "old": old = value
            case "new": new = value
            case "options": options = value
            default: throw Problem.wrongShape("body: unknown member \(key.string.map { $0.debugDescription } ?? "?"); expected old, new, options")
            }
        }
        guard let old else { throw Problem.wrongShape("body: the member \"old\" is missing") }
        guard let new else { throw Problem.wrongShape("body: the member \"new\" is missing") }
        let (idKey, diffOptions) = try Self.options(options)
        do {
            let batch = try JSONBatch(
                from: old.collection(idKey: idKey, path: "old"), to: new.collection(idKey: idKey, path: "new"), options: diffOptions
            )
            var output = JSONOutput(capacity: 4096)
            output.batch(batch)
            return .json(200, output.bytes)
        } catch {
            throw Problem.wrongShape(error)
        }
    }

    /// Reads `options`: `idKey` (a non-empty string) and `moves` (a Boolean).
    private static func options(_ value: JSONValue?) throws(Problem) -> (idKey: String, options: DiffOptions) {
        var idKey = "id"
        var options = DiffOptions()
        guard let value else { return (idKey, options) }
        guard value.isObject else { throw Problem.wrongShape("options: expected an object, found \(value.kindName)") }
        for (key, member) in value.members {
            switch key.string {
            case "idKey":
                guard let text = member.string, !text.isEmpty else {
                    throw Problem.wrongShape("options.idKey: expected a non-empty string, found \(member.kindName)")
                }
                idKey = text
            case "moves":
                guard let moves = member.bool else { throw Problem.wrongShape("options.moves: expected true or false, found \(member.kindName)") }
                options.allowsMoves = moves
            default:
                throw Problem.wrongShape("options: unknown member \(key.string.map { $0.debugDescription } ?? "?"); expected idKey, moves")
            }
        }
        return (idKey, options)
    }
}
