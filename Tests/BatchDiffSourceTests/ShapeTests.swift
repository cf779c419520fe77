@testable import BatchDiffSource
import XCTest

/// Shapes files and feed templates (docs/sources.md §2).
final class ShapeTests: XCTestCase {
    func testTemplatesMatchIdsAndMakeThem() throws {
        let template = try FeedTemplate("todos-{owner}-{list}")
        XCTAssertEqual(template.values(in: "todos-ann-home"), ["owner": "ann", "list": "home"])
        XCTAssertEqual(template.values(in: "todos-ann-home-2"), ["owner": "ann", "list": "home-2"])
        XCTAssertNil(template.values(in: "todos-ann"))
        XCTAssertNil(template.values(in: "todos--home"))
        XCTAssertEqual(template.id(filling: ["owner": "ann", "list": "home"]), "todos-ann-home")
        // Values that would read back otherwise make no id: a row with them is in no feed.
        XCTAssertNil(template.id(filling: ["owner": "ann-b", "list": "home"]))
        XCTAssertNil(template.id(filling: ["owner": "ann b", "list": "home"]))
        XCTAssertNil(template.id(filling: ["owner": "", "list": "home"]))
        XCTAssertEqual(try FeedTemplate("leaderboard").values(in: "leaderboard"), [:])
        XCTAssertNil(try FeedTemplate("leaderboard").values(in: "leaderboards"))
        XCTAssertThrowsError(try FeedTemplate("a-{x}{y}"))
        XCTAssertThrowsError(try FeedTemplate("a-{x"))
        XCTAssertThrowsError(try FeedTemplate("a b-{x}"))
    }

    func testTemplatesOneIdCouldMatchAreTold() throws {
        func overlap(_ left: String, _ right: String) throws -> Bool { try FeedTemplate(left).mayOverlap(FeedTemplate(right)) }
        XCTAssertTrue(try overlap("todos-{owner}", "todos-{owner}-done"))
        XCTAssertTrue(try overlap("todos-{owner}", "todos-ann"))
        XCTAssertTrue(try overlap("{a}-x", "{b}-x"))
        XCTAssertFalse(try overlap("todos-{owner}", "notes-{owner}"))
        XCTAssertFalse(try overlap("{a}-todos", "{a}-notes"))
        XCTAssertFalse(try overlap("leaderboard", "todos-{owner}"))
        XCTAssertFalse(try overlap("leaderboard", "board"))
    }

    func testShapesFiles() throws {
        let shapes = try Shape.shapes(of: Array("""
            {"shapes": [{"feed": "todos-{owner}", "table": "app.todos", "key": "id", "columns": ["id", "title"],
                         "where": {"owner": "{owner}", "deleted": null, "kind": "task", "n": 2}, "orderBy": ["-due", "id"]}]}
            """.utf8))
        XCTAssertEqual(shapes.count, 1)
        XCTAssertEqual([shapes[0].schema, shapes[0].table], ["app", "todos"])
        XCTAssertEqual(shapes[0].orderBy, ["-due", "id"])
        XCTAssertEqual(shapes[0].conditions.map(\.column), ["owner", "deleted", "kind", "n"])
        XCTAssertEqual(shapes[0].conditions.map(\.test), [.placeholder("owner"), .isNull, .equals(Array(#""task""#.utf8)), .equals(Array("2".utf8))])
        for (text, says) in [
            ("[]", "an object with an array"),
            (#"{"shapes": [{"table": "t"}]}"#, "\"feed\""),
            (#"{"shapes": [{"feed": "a", "table": "t", "colour": 1}]}"#, "no member \"colour\""),
            (#"{"shapes": [{"feed": "a-{x}", "table": "t"}]}"#, "placeholder {x} is in no"),
            (#"{"shapes": [{"feed": "a", "table": "t", "where": {"o": "{x}"}}]}"#, "does not have"),
            (#"{"shapes": [{"feed": "a", "table": "t", "where": {"o": [1]}}]}"#, "scalar"),
            (#"{"shapes": [{"feed": "a", "table": "t", "key": "k", "columns": ["x"]}]}"#, "key column"),
            (#"{"shapes": [{"feed": "a", "table": "t"}, {"feed": "a", "table": "u"}]}"#, "shapes[1]"),
            (#"{"shapes": [{"feed": "a", "table": "x.y.z"}]}"#, "schema.table"),
        ] {
            XCTAssertThrowsError(try Shape.shapes(of: Array(text.utf8)), text) { error in
                XCTAssertTrue("\(error)".contains(says), "\(text): \(error)")
            }
        }
    }
}
