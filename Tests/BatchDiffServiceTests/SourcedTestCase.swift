import BatchDiff
import Foundation
import TestSupport
import XCTest

/// What the tests of feeds that follow a real PostgreSQL share (docs/sources.md): a
/// throwaway cluster with `wal_level=logical`, a schema and its shapes, servers that follow
/// it, and the checks of a version against a `SELECT`.
class SourcedTestCase: ServerTestCase {
    var cluster: PostgresCluster!
    var shapesURL: URL!

    static let schema = """
        CREATE TABLE todos (id int PRIMARY KEY, owner text NOT NULL, title text NOT NULL, rank int NOT NULL DEFAULT 0,
                            done boolean NOT NULL DEFAULT false, body text, secret text);
        ALTER TABLE todos ALTER COLUMN body SET STORAGE EXTERNAL;
        CREATE TABLE products (id int PRIMARY KEY, company text NOT NULL, name text NOT NULL, price numeric NOT NULL);
        INSERT INTO todos (id, owner, title, rank) VALUES (1, 'ann', 'milk', 2), (2, 'ann', 'eggs', 1), (3, 'bob', 'tea', 5);
        INSERT INTO products VALUES (1, 'acme', 'anvil', 9.5), (2, 'acme', 'rocket', 120), (3, 'zeta', 'zip', 1);
        """

    static let shapes = """
        {"shapes": [
          {"feed": "todos-{owner}", "table": "todos", "columns": ["id", "title", "rank", "done", "body"],
           "where": {"owner": "{owner}"}, "orderBy": ["rank", "id"]},
          {"feed": "byrank-{rank}", "table": "public.todos", "columns": ["id", "title"], "where": {"rank": "{rank}", "done": false}},
          {"feed": "catalog", "table": "products", "columns": ["id", "name", "price"], "orderBy": ["name"], "sectionBy": "company"}
        ]}
        """

    override func setUpWithError() throws {
        cluster = try PostgresCluster()
        try cluster.query(Self.schema)
        shapesURL = cluster.directory.appendingPathComponent("shapes.json")
        try Data(Self.shapes.utf8).write(to: shapesURL)
    }

    override func tearDown() {
        super.tearDown()
        cluster = nil
    }

    func startSourcedServer(_ arguments: [String] = []) throws -> HTTPClient {
        try startServer(["--source-database", cluster.uri, "--shapes", shapesURL.path] + arguments).client
    }

    /// What a client of a list feed holds: its version and rows.
    struct Held {
        var version: Int
        var rows: [JSONElement]
    }

    /// The `todos` of `owner` as the shape selects them, in its order.
    func todos(_ owner: String) throws -> Any {
        parseJSON(try cluster.query("""
            SELECT coalesce(json_agg(json_build_object('id', id, 'title', title, 'rank', rank, 'done', done, 'body', body) ORDER BY rank, id), '[]')
            FROM todos WHERE owner = '\(owner)'
            """))
    }

    /// The products in sections by company (a price of more than 15 digits as a string).
    func catalog() throws -> Any {
        parseJSON(try cluster.query("""
            SELECT json_build_object('sections', coalesce(json_agg(json_build_object('company', company, 'items', items) ORDER BY company COLLATE "C"), '[]'))
            FROM (SELECT company, json_agg(json_build_object('id', id, 'name', name, 'price',
                    CASE WHEN length(regexp_replace(price::text, '[^0-9]', '', 'g')) > 15 THEN to_json(price::text) ELSE to_json(price) END) ORDER BY name COLLATE "C", id) AS items
                  FROM products GROUP BY company) AS sections
            """))
    }

    /// Reads feed `name` (making it) and checks it holds `expected`.
    func read(_ client: HTTPClient, _ name: String, expected: Any, file: StaticString = #filePath, line: UInt = #line) throws -> Held {
        let feed = assertJSON(try client.get("/feeds/\(name)"), file: file, line: line)
        XCTAssertEqual(feed["data"].map(canonicalJSON), canonicalJSON(expected), file: file, line: line)
        return Held(version: int(feed["version"]) ?? 0, rows: listElements(feed["data"] ?? []))
    }

    /// Waits for the next version of list feed `name` and checks it: exactly one version
    /// after `held`, its batch applied to `held` gives `expected`, keeping every rule.
    func expectVersion(_ client: HTTPClient, _ name: String, _ held: inout Held, expected: Any, file: StaticString = #filePath, line: UInt = #line) throws {
        let answer = assertJSON(try client.get("/feeds/\(name)/changes?since=\(held.version)&wait=10", timeout: 15), file: file, line: line)
        XCTAssertEqual(int(answer["to"]), held.version + 1, "one version per commit: \(answer)", file: file, line: line)
        let new = listElements(expected)
        let batch = try decodeListBatch(answer)
        XCTAssertEqual(try batch.apply(to: held.rows, values: try decodeListValues(answer)), new, "\(answer)", file: file, line: line)
        let (old, wrapped) = ([Section(header: 0, items: held.rows)], [Section(header: 0, items: new)])
        XCTAssertEqual(brokenRules(batch.sectioned, old: old, new: wrapped, identity: \.identity), [], file: file, line: line)
        held = Held(version: int(answer["to"]) ?? held.version, rows: new)
    }
}
