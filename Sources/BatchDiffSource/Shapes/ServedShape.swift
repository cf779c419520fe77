import BatchDiffJSON
import PostgreSQL

/// A shape checked against the database: its table and columns exist, its key is one
/// column, its constants read as their columns' types. What the follower reads rows with:
/// the columns it needs from each row (``columns``), and where among them are the members,
/// the key, the `where` tests and the section.
struct ServedShape: Sendable {
    /// A column the shape reads.
    struct Column: Equatable, Sendable {
        var name: String
        var kind: ColumnKind
        /// The type as SQL writes it (`format_type`), for casts.
        var sqlType: String
    }

    /// A `where` test on ``columns``[`column`].
    enum Test: Equatable, Sendable {
        /// The value's text form is this one: the constant's, as the column's type writes it
        /// (so equal values compare equal by their texts).
        case equals(String)
        case isNull
        case placeholder(String)
    }

    let shape: Shape
    /// The table's oid, as the replication stream names relations.
    let tableOID: UInt32
    /// The columns read from each row: the members first, in the shape's order, then the
    /// `where` and section columns the members do not hold.
    let columns: [Column]
    /// How many of ``columns`` are members.
    let memberCount: Int
    /// The key column's index in ``columns``.
    let key: Int
    let tests: [(column: Int, test: Test)]
    let section: Int?
    let rowOrder: SortOrder
    let sectionOrder: SortOrder?
    /// Each of ``columns``' names as a JSON string.
    let quotedNames: [[UInt8]]

    /// `shape` as the database at `connection` has its table; throws a sentence naming the
    /// shape and what is missing.
    static func resolve(_ shape: Shape, index: Int, on connection: PostgresConnection, deadline: ContinuousClock.Instant) throws(ShapeError) -> ServedShape {
        func refused(_ detail: String) -> ShapeError { ShapeError("shapes[\(index)] (feed \"\(shape.feed)\"): \(detail)") }
        func ask<Value>(_ work: () throws(PostgresError) -> Value) throws(ShapeError) -> Value {
            do throws(PostgresError) {
                return try work()
            } catch {
                throw refused("the database did not answer: \(error)")
            }
        }
        // A scope of its own: the local functions above must not see what is declared below.
        do {
            let (tableOID, table, names, primaryKey) = try catalog(of: shape, on: connection, deadline: deadline, ask: ask, refused: refused)
            guard let keyName = shape.key ?? primaryKey else {
                throw refused("the table \(shape.tableName) has no primary key of one column: name the identity column with \"key\"")
            }
            func column(_ name: String, _ role: String) throws(ShapeError) -> Column {
                guard let column = table[name] else { throw refused("the table \(shape.tableName) has no column \"\(name)\" (\(role))") }
                return column
            }
            let memberNames = shape.columns ?? names
            guard memberNames.contains(keyName) else { throw refused("\"columns\" must hold the key column \"\(keyName)\"") }
            var columns: [Column] = []
            for name in memberNames { columns.append(try column(name, "columns")) }
            func index(of name: String, _ role: String) throws(ShapeError) -> Int {
                if let found = columns.firstIndex(where: { $0.name == name }) { return found }
                columns.append(try column(name, role))
                return columns.count - 1
            }
            let memberCount = columns.count
            let key = try index(of: keyName, "key")
            var tests: [(Int, Test)] = []
            for (name, condition) in shape.conditions {
                let at = try index(of: name, "where")
                switch condition {
                case .isNull: tests.append((at, .isNull))
                case .placeholder(let placeholder): tests.append((at, .placeholder(placeholder)))
                case .equals(let json):
                    let text = JSONConstant.text(of: json)
                    let column = columns[at]
                    guard let canonical = try ask({ () throws(PostgresError) in try canonicalText(text, as: column, on: connection, deadline: deadline) }) else {
                        throw refused("the \"where\" value \(String(decoding: json, as: UTF8.self)) is not a \(columns[at].sqlType) (column \"\(name)\")")
                    }
                    tests.append((at, .equals(canonical)))
                }
            }
            let section = try shape.sectionBy.map { name throws(ShapeError) in
                guard name != keyName else { throw refused("\"sectionBy\" cannot be the key column") }
                return try index(of: name, "sectionBy")
            }
            let orderBy = shape.orderBy.isEmpty ? [keyName] : shape.orderBy
            for name in orderBy {
                let column = name.hasPrefix("-") ? String(name.dropFirst()) : name
                guard memberNames.contains(column) else { throw refused("\"orderBy\" names \"\(column)\", which is not one of the rows' columns") }
            }
            let rowOrder: SortOrder
            do {
                rowOrder = try SortOrder(parsing: orderBy.joined(separator: ","))
            } catch {
                throw refused("\"orderBy\": \(error)")
            }
            let sectionOrder = shape.sectionBy.flatMap { try? SortOrder(parsing: $0) }
            return ServedShape(
                shape: shape, tableOID: tableOID, columns: columns, memberCount: memberCount, key: key, tests: tests, section: section,
                rowOrder: rowOrder, sectionOrder: sectionOrder, quotedNames: columns.map { column in
                    var output = JSONOutput()
                    output.string(column.name)
                    return output.bytes
                }
            )
        }
    }

    /// The table's oid and columns (by name, and their names in order), and its primary
    /// key's column when the key is one column.
    private static func catalog(
        of shape: Shape, on connection: PostgresConnection, deadline: ContinuousClock.Instant,
        ask: (() throws(PostgresError) -> PostgresRows) throws(ShapeError) -> PostgresRows, refused: (String) -> ShapeError
    ) throws(ShapeError) -> (UInt32, [String: Column], [String], String?) {
        let found = try ask { () throws(PostgresError) in try connection.query(
            """
            SELECT c.oid::int8, a.attname, a.atttypid::int8, CASE WHEN t.typcategory = 'A' THEN t.typelem::int8 ELSE 0 END,
                   format_type(a.atttypid, a.atttypmod),
                   coalesce((SELECT i.indnkeyatts = 1 AND i.indkey[0] = a.attnum FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary), false)
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            JOIN pg_type t ON t.oid = a.atttypid
            WHERE n.nspname = $1::text AND c.relname = $2::text AND c.relkind IN ('r', 'p')
            ORDER BY a.attnum
            """,
            [.text(shape.schema), .text(shape.table)], format: .text, deadline: deadline
        ) }
        guard !found.isEmpty else { throw refused("there is no table \(shape.tableName)") }
        var table: [String: Column] = [:]
        var names: [String] = []
        var primaryKey: String?
        for row in 0..<found.count {
            let name = found.text(row, 1)
            let kind = ColumnKind(typeOID: UInt32(found.text(row, 2)) ?? 0, element: UInt32(found.text(row, 3)) ?? 0)
            table[name] = Column(name: name, kind: kind, sqlType: found.text(row, 4))
            names.append(name)
            if found.text(row, 5) == "t" { primaryKey = name }
        }
        return (UInt32(found.text(0, 0)) ?? 0, table, names, primaryKey)
    }

    /// The text form PostgreSQL gives `text` cast to `column`'s type, or `nil` when it does
    /// not cast.
    static func canonicalText(_ text: String, as column: Column, on connection: PostgresConnection, deadline: ContinuousClock.Instant) throws(PostgresError) -> String? {
        do throws(PostgresError) {
            let rows = try connection.query("SELECT CAST($1::text AS \(column.sqlType))::text", [.text(text)], format: .text, deadline: deadline)
            return rows.text(0, 0)
        } catch where error.kind == .statement {
            return nil
        }
    }

    /// The SQL that selects the rows of one of the shape's feeds, the values of the
    /// placeholders as `$1`, `$2`, ... in ``placeholderNames``' order: ``columns``, in order.
    func selectStatement(quoting connection: PostgresConnection) -> String {
        let list = columns.map { connection.quotedIdentifier($0.name) }.joined(separator: ", ")
        let table = connection.quotedIdentifier(shape.schema) + "." + connection.quotedIdentifier(shape.table)
        var conditions: [String] = []
        for (column, test) in tests {
            let name = connection.quotedIdentifier(columns[column].name)
            switch test {
            case .isNull: conditions.append("\(name) IS NULL")
            case .equals(let text): conditions.append("\(name) = CAST(\(connection.quotedLiteral(text)) AS \(columns[column].sqlType))")
            case .placeholder(let placeholder):
                let number = placeholderNames.firstIndex(of: placeholder)! + 1
                conditions.append("\(name) = CAST($\(number)::text AS \(columns[column].sqlType))")
            }
        }
        return "SELECT \(list) FROM \(table)" + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
    }

    /// The SQL that selects the row whose key is `$1` (its text form), whatever feed it is in.
    func selectByKeyStatement(quoting connection: PostgresConnection) -> String {
        let list = columns.map { connection.quotedIdentifier($0.name) }.joined(separator: ", ")
        let table = connection.quotedIdentifier(shape.schema) + "." + connection.quotedIdentifier(shape.table)
        return "SELECT \(list) FROM \(table) WHERE \(connection.quotedIdentifier(columns[key].name)) = CAST($1::text AS \(columns[key].sqlType))"
    }

    /// The feed template's placeholders, in order.
    var placeholderNames: [String] { shape.feed.placeholders }
}

/// The text a `where` constant stands for: a JSON string's characters, else its JSON text
/// (`12`, `true`).
enum JSONConstant {
    static func text(of json: [UInt8]) -> String {
        if let document = try? JSONDocument(bytes: json), let string = document.root.string { return string }
        return String(decoding: json, as: UTF8.self)
    }
}
