import BatchDiff
import BatchDiffClient
import Foundation
import XCTest

/// The answer types read the server's JSON as docs/batch-format.md writes it.
final class AnswerDecodingTests: XCTestCase {
    private func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(json.utf8))
    }

    /// The list example of docs/batch-format.md §2.1, applied.
    func testTheListExampleDecodesAndApplies() throws {
        let changes = try decode(FeedChanges<JSON, JSON>.self, """
            {"feed": "f", "from": 3, "to": 4,
             "rows": {"deleted": [2], "inserted": [3], "reloaded": [], "moved": [{"from": 3, "to": 0}]},
             "counts": {"old": 4, "new": 4}, "values": {"rows": {"inserted": ["e"], "reloaded": []}}}
            """)
        XCTAssertEqual(changes.update, .list(ListBatch(rows: RowChanges(deleted: [2], inserted: [3], moved: [Move(from: 3, to: 0)]), oldCount: 4, newCount: 4)))
        let old = FeedCollection<JSON, JSON>.list(["a", "b", "c", "d"].map(JSON.string))
        XCTAssertEqual(try changes.applied(to: old) { $0.identity() }, .list(["d", "a", "b", "e"].map(JSON.string)))
    }

    /// Empty lists may be left out (§2.5); sections decode with their headers.
    func testSectionedAnswersWithListsLeftOut() throws {
        let changes = try decode(FeedChanges<JSON, JSON>.self, """
            {"feed": "f", "from": 1, "to": 2, "sections": {"inserted": [1], "updated": [0]},
             "rows": {"reloaded": [[0, 0]]}, "counts": {"old": [1], "new": [1, 1]},
             "values": {"rows": {"reloaded": [{"id": 1, "v": 2}]},
                        "sections": {"inserted": [{"id": "b", "items": [7]}], "updated": [{"id": "a", "title": "A"}]}}}
            """)
        let old = FeedCollection<JSON, JSON>.sectioned([Section(header: ["id": "a"], items: [["id": 1, "v": 1]])])
        let new = try changes.applied(to: old) { $0.identity() }
        XCTAssertEqual(new, .sectioned([
            Section(header: ["id": "a", "title": "A"], items: [["id": 1, "v": 2]]),
            Section(header: ["id": "b"], items: [7]),
        ]))
    }

    /// `changedMembers` of rows and sections, aligned with `rows.reloaded` and `sections.updated`.
    func testChangedMembersDecode() throws {
        let changes = try decode(FeedChanges<JSON, JSON>.self, """
            {"feed": "f", "from": 1, "to": 2,
             "sections": {"updated": [0], "changedMembers": [["title"]]},
             "rows": {"reloaded": [[0, 0], [0, 1]], "changedMembers": [["v", "w"], null]}, "counts": {"old": [2], "new": [2]},
             "values": {"rows": {"reloaded": [{"id": 1, "v": 2, "w": 0}, {"id": "b", "x": 1}]}, "sections": {"updated": [{"id": "a", "title": "A"}]}}}
            """)
        XCTAssertEqual(changes.changedMembers?.rows, [["v", "w"], nil])
        XCTAssertEqual(changes.changedMembers?.sections, [["title"]])
        let plain = try decode(FeedChanges<JSON, JSON>.self, """
            {"feed": "f", "from": 1, "to": 2, "rows": {}, "counts": {"old": 0, "new": 0}, "values": {"rows": {}}}
            """)
        XCTAssertNil(plain.changedMembers)
    }

    /// An answer that does not fit what the client holds is an error, never a wrong result.
    func testAMismatchIsAnError() throws {
        let changes = try decode(FeedChanges<JSON, JSON>.self, """
            {"feed": "f", "from": 1, "to": 2, "rows": {"reloaded": [0]}, "counts": {"old": 1, "new": 1},
             "values": {"rows": {"reloaded": [{"id": 2}]}}}
            """)
        XCTAssertThrowsError(try changes.applied(to: .list([["id": 1]])) { $0.identity() }, "a reload that changes identity")
        XCTAssertThrowsError(try changes.applied(to: .list([["id": 2], ["id": 3]])) { $0.identity() }, "counts that differ")
        XCTAssertThrowsError(try changes.applied(to: .sectioned([])) { $0.identity() }, "another shape")
    }

    /// `maxChanges` exceeded: a reload with the whole collection.
    func testAReloadCarriesTheWholeCollection() throws {
        let changes = try decode(FeedChanges<JSON, JSON>.self, """
            {"feed": "f", "from": 1, "to": 9, "reload": true, "counts": {"old": 2, "new": 1}, "data": [{"id": 5}]}
            """)
        XCTAssertEqual(changes.update, .reload(oldCounts: [2], newCounts: [1]))
        XCTAssertEqual(try changes.applied(to: .list([1, 2])) { $0.identity() }, .list([["id": 5]]))
    }

    /// The app's own types, identified by `id`; problem documents.
    func testAppTypesAndProblems() throws {
        struct Product: Decodable, Identifiable, Equatable {
            var id: Int
            var title: String
        }
        let changes = try decode(FeedChanges<JSON, Product>.self, """
            {"feed": "f", "from": 0, "to": 1, "rows": {"inserted": [0, 1]}, "counts": {"old": 0, "new": 2},
             "values": {"rows": {"inserted": [{"id": 1, "title": "a", "price": 3}, {"id": 2, "title": "b"}]}}}
            """)
        XCTAssertEqual(try changes.applied(to: nil), .list([Product(id: 1, title: "a"), Product(id: 2, title: "b")]))
        let problem = try decode(ProblemDocument.self, """
            {"type": "urn:batchdiff:version_gone", "title": "Gone", "status": 410, "detail": "d", "code": "version_gone", "latest": 7}
            """)
        XCTAssertEqual(problem.latest, 7)
        XCTAssertEqual(problem.code, "version_gone")
    }

    /// Numbers keep their exact value through JSON.
    func testJSONValueKeepsNumbersExact() throws {
        let value = try decode(JSON.self, "[9007199254740993, 1.10, -0, {\"a\": null}]")
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        XCTAssertEqual(String(decoding: try encoder.encode(value), as: UTF8.self), #"[9007199254740993,1.1,0,{"a":null}]"#)
    }
}

