import BatchDiffFeeds
@testable import BatchDiffSource
import XCTest

/// What a transaction does to the feeds made (docs/sources.md §4), without a database:
/// the feeds found by the rows' values, the snapshot's horizon, the `PATCH` each feed gets.
final class SourceStateTests: XCTestCase {
    private let relation = PgOutputMessage.Relation(id: 7, namespace: "public", name: "todos", columns: [
        .init(isKey: true, name: "id", typeOID: 23), .init(isKey: false, name: "owner", typeOID: 25), .init(isKey: false, name: "title", typeOID: 25),
    ])

    private func served() throws -> ServedShape {
        let shape = try Shape.shapes(of: Array(#"{"shapes": [{"feed": "todos-{owner}", "table": "todos", "columns": ["id", "title"], "where": {"owner": "{owner}"}}]}"#.utf8))[0]
        let columns = [ServedShape.Column(name: "id", kind: .integer, sqlType: "integer"), .init(name: "title", kind: .text, sqlType: "text"), .init(name: "owner", kind: .text, sqlType: "text")]
        return ServedShape(
            shape: shape, tableOID: 7, columns: columns, memberCount: 2, key: 0, tests: [(2, .placeholder("owner"))], section: nil,
            rowOrder: try .init(parsing: "id"), sectionOrder: nil, quotedNames: [Array(#""id""#.utf8), Array(#""title""#.utf8), Array(#""owner""#.utf8)]
        )
    }

    private func tuple(_ id: Int, _ owner: String, _ title: String) -> [PgOutputMessage.TupleValue] {
        [.text(Array(String(id).utf8)), .text(Array(owner.utf8)), .text(Array(title.utf8))]
    }

    private func state(made owners: [String: SnapshotHorizon?]) throws -> SourceState {
        let shape = try served()
        var state = SourceState(shapes: [shape])
        state.describe(relation)
        for (owner, horizon) in owners {
            state.register(MadeFeed(id: try FeedID("todos-\(owner)"), shape: 0, placeholderValues: [owner], horizon: horizon, lastRead: .now))
        }
        return state
    }

    private func patches(_ edits: [FeedID: FeedEdit], _ state: SourceState) -> [String: String] {
        Dictionary(uniqueKeysWithValues: edits.map { id, edit in
            (id.name, String(decoding: edit.patch(to: state.feeds[id]!, shape: state.shapes[0]), as: UTF8.self))
        })
    }

    func testRowsGoToTheFeedTheirValuesName() throws {
        var state = try state(made: ["ann": nil, "bob": nil])
        var edits = state.apply([.insert(relation: 7, new: tuple(1, "ann", "milk")), .insert(relation: 7, new: tuple(2, "cy", "tea"))], xid: 1, end: LogPosition(10))
        XCTAssertEqual(patches(edits, state), ["todos-ann": #"{"ops":[{"op":"upsert","item":{"id":1,"title":"milk"}}]}"#])
        // The row crosses from ann to bob: a remove and an upsert.
        edits = state.apply([.update(relation: 7, old: nil, new: tuple(1, "bob", "milk"))], xid: 2, end: LogPosition(20))
        XCTAssertEqual(patches(edits, state), [
            "todos-ann": #"{"ops":[{"op":"remove","id":1}]}"#, "todos-bob": #"{"ops":[{"op":"upsert","item":{"id":1,"title":"milk"}}]}"#,
        ])
        // Changed and changed back in one transaction: nothing to send.
        edits = state.apply([.update(relation: 7, old: nil, new: tuple(1, "bob", "x")), .update(relation: 7, old: nil, new: tuple(1, "bob", "milk"))], xid: 3, end: LogPosition(30))
        XCTAssertTrue(edits.values.allSatisfy { $0.changesNothing(in: state.feeds[try! FeedID("todos-bob")]!) })
        // A key that changes; a delete; a truncate.
        edits = state.apply([.update(relation: 7, old: [.text(Array("1".utf8)), .null, .null], new: tuple(9, "bob", "milk"))], xid: 4, end: LogPosition(40))
        XCTAssertEqual(patches(edits, state), ["todos-bob": #"{"ops":[{"op":"remove","id":1},{"op":"upsert","item":{"id":9,"title":"milk"}}]}"#])
        _ = state.apply([.insert(relation: 7, new: tuple(3, "ann", "jam"))], xid: 5, end: LogPosition(50))
        edits = state.apply([.delete(relation: 7, old: [.text(Array("9".utf8)), .null, .null])], xid: 6, end: LogPosition(60))
        XCTAssertEqual(patches(edits, state), ["todos-bob": #"{"ops":[{"op":"remove","id":9}]}"#])
        edits = state.apply([.truncate(relations: [7])], xid: 7, end: LogPosition(70))
        XCTAssertEqual(patches(edits, state), ["todos-ann": #"{"ops":[{"op":"remove","id":3}]}"#])
        XCTAssertTrue(state.feeds.values.allSatisfy { $0.rows.isEmpty })
    }

    func testAFeedSkipsWhatItsSnapshotSaw() throws {
        // Made at a snapshot that saw transactions below 100 and 101, 103, 104; not 102 (in
        // progress) nor 105 and later; the WAL insert position then was 1000.
        let horizon = SnapshotHorizon(snapshot: "100:105:102", position: LogPosition(1000))!
        XCTAssertEqual([99, 100, 101, 102, 103, 104, 105, 200].map { horizon.saw($0) }, [true, true, true, false, true, true, false, false])
        var state = try state(made: ["ann": horizon])
        let ann = try FeedID("todos-ann")
        XCTAssertTrue(state.apply([.insert(relation: 7, new: tuple(1, "ann", "seen"))], xid: 101, end: LogPosition(900)).isEmpty)
        XCTAssertEqual(state.apply([.insert(relation: 7, new: tuple(2, "ann", "in progress"))], xid: 102, end: LogPosition(950)).keys.map(\.name), ["todos-ann"])
        XCTAssertEqual(state.apply([.insert(relation: 7, new: tuple(3, "ann", "later"))], xid: 105, end: LogPosition(980)).keys.map(\.name), ["todos-ann"])
        XCTAssertNotNil(state.feeds[ann]?.horizon)
        // Past the horizon, everything applies, and the horizon is forgotten.
        XCTAssertEqual(state.apply([.insert(relation: 7, new: tuple(4, "ann", "after"))], xid: 103, end: LogPosition(1100)).keys.map(\.name), ["todos-ann"])
        XCTAssertNil(state.feeds[ann]?.horizon)
        XCTAssertEqual(Set(state.feeds[ann]!.rows.keys.map { String(decoding: $0, as: UTF8.self) }), ["2", "3", "4"])
        // Transaction ids wrap around.
        let wrapped = SnapshotHorizon(snapshot: "4294967290:4294967300:", position: LogPosition(1))!
        XCTAssertEqual([4_294_967_289, 4_294_967_295, 2, 4, 5].map { wrapped.saw($0) }, [true, true, true, false, false])
    }
}
