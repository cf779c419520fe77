import BatchDiffJSON

/// Which rows of a table make a feed, and how (docs/sources.md §2), as the shapes file
/// says it: a shape before the database is asked whether its table and columns exist
/// (``ServedShape``).
struct Shape: Equatable, Sendable {
    /// A `where` test on one column.
    enum Condition: Equatable, Sendable {
        /// The column equals this JSON scalar (its compact text).
        case equals([UInt8])
        /// The column is NULL.
        case isNull
        /// The column equals the feed id's value of this placeholder.
        case placeholder(String)
    }

    var feed: FeedTemplate
    var schema: String
    var table: String
    /// The column whose value is each row's identity; `nil`: the primary key's one column.
    var key: String?
    /// The rows' members, in order; `nil`: every column.
    var columns: [String]?
    /// Column and test, in the order the file gives them.
    var conditions: [(column: String, test: Condition)]
    /// Column names, `-name` descending; empty: the key, ascending.
    var orderBy: [String]
    var sectionBy: String?

    /// `schema.table` as the file names it.
    var tableName: String { "\(schema).\(table)" }

    static func == (left: Shape, right: Shape) -> Bool {
        left.feed == right.feed && left.schema == right.schema && left.table == right.table && left.key == right.key
            && left.columns == right.columns && left.orderBy == right.orderBy && left.sectionBy == right.sectionBy
            && left.conditions.elementsEqual(right.conditions) { $0.column == $1.column && $0.test == $1.test }
    }

    /// The shapes of a shapes file's text, `{"shapes": [Shape, ...]}`; throws a sentence
    /// naming the shape (by its index and feed) and what is wrong with it.
    static func shapes(of text: [UInt8]) throws(ShapeError) -> [Shape] {
        let document: JSONDocument
        do {
            document = try JSONDocument(bytes: text, refusingRepeatedMembers: true)
        } catch {
            throw ShapeError("the shapes file is not JSON: \(error)")
        }
        guard document.root.isObject, let list = document.root.member(named: "shapes"), list.isArray else {
            throw ShapeError("the shapes file is {\"shapes\": [...]}, an object with an array of shapes")
        }
        var shapes: [Shape] = []
        for (index, value) in list.elements.enumerated() {
            let shape = try Shape(value, index: index)
            if let other = shapes.first(where: { $0.feed.mayOverlap(shape.feed) }) {
                throw ShapeError("shapes[\(index)]: its feed template \"\(shape.feed)\" may match the ids of \"\(other.feed)\"")
            }
            shapes.append(shape)
        }
        return shapes
    }

    private static let members: Set<String> = ["feed", "table", "key", "columns", "where", "orderBy", "sectionBy"]

    private init(_ value: JSONValue, index: Int) throws(ShapeError) {
        func refused(_ detail: String) -> ShapeError { ShapeError("shapes[\(index)]: \(detail)") }
        guard value.isObject else { throw refused("a shape is an object") }
        if let unknown = value.members.compactMap({ $0.key.string }).first(where: { !Self.members.contains($0) }) {
            throw refused("a shape has no member \"\(unknown)\"")
        }
        guard let feed = value.member(named: "feed")?.string else { throw refused("\"feed\" (a feed-id template) is required") }
        do throws(ShapeError) {
            self.feed = try FeedTemplate(feed)
        } catch {
            throw refused(error.description)
        }
        guard let table = value.member(named: "table")?.string, !table.isEmpty else { throw refused("\"table\" (schema.table) is required") }
        let parts = table.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, parts.allSatisfy({ !$0.isEmpty }) else { throw refused("\"table\" is table or schema.table; found \"\(table)\"") }
        schema = parts.count == 2 ? String(parts[0]) : "public"
        self.table = String(parts.last!)
        key = try Self.name(value, "key", refused)
        sectionBy = try Self.name(value, "sectionBy", refused)
        columns = try Self.names(value, "columns", refused)
        orderBy = try Self.names(value, "orderBy", refused) ?? []
        conditions = []
        if let conditions = value.member(named: "where") {
            guard conditions.isObject else { throw refused("\"where\" is an object of column and value") }
            for (column, test) in conditions.members {
                self.conditions.append((column.string ?? "", try Self.condition(test, refused)))
            }
        }
        let placeholders = Set(conditions.compactMap { if case .placeholder(let name) = $0.test { name } else { nil } })
        if let missing = self.feed.placeholders.first(where: { !placeholders.contains($0) }) {
            throw refused("the feed template's placeholder {\(missing)} is in no \"where\" test")
        }
        if let extra = placeholders.first(where: { !self.feed.placeholders.contains($0) }) {
            throw refused("\"where\" names a placeholder {\(extra)} the feed template does not have")
        }
        if let columns, let key, !columns.contains(key) { throw refused("\"columns\" must hold the key column \"\(key)\"") }
    }

    private static func name(_ value: JSONValue, _ member: String, _ refused: (String) -> ShapeError) throws(ShapeError) -> String? {
        guard let found = value.member(named: member) else { return nil }
        guard let name = found.string, !name.isEmpty else { throw refused("\"\(member)\" is a column's name") }
        return name
    }

    private static func names(_ value: JSONValue, _ member: String, _ refused: (String) -> ShapeError) throws(ShapeError) -> [String]? {
        guard let found = value.member(named: member) else { return nil }
        let names = found.isArray ? found.elements.compactMap(\.string) : []
        guard found.isArray, names.count == found.elements.count, !names.isEmpty, names.allSatisfy({ !$0.isEmpty }) else {
            throw refused("\"\(member)\" is a non-empty array of column names")
        }
        return names
    }

    private static func condition(_ test: JSONValue, _ refused: (String) -> ShapeError) throws(ShapeError) -> Condition {
        if test.isArray || test.isObject { throw refused("a \"where\" value is a JSON scalar or a \"{placeholder}\"") }
        if test.text.elementsEqual("null".utf8) { return .isNull }
        if let string = test.string, string.hasPrefix("{"), string.hasSuffix("}"), string.count > 2 {
            return .placeholder(String(string.dropFirst().dropLast()))
        }
        return .equals(Array(test.text))
    }
}
