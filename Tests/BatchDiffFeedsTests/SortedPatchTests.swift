import BatchDiff
@testable import BatchDiffFeeds
import BatchDiffJSON
import TestSupport
import XCTest

/// Patches of sorted feeds (docs/feeds.md §3.2): upserts take no position and go where their
/// keys put them. Random histories of positionless upserts that move rows, reload them in
/// place, insert and remove them, and merges, in lists and sections, in process against a
/// model of the order written here: every batch applies to the sorted rows before and makes
/// the model's sorted rows after, and keeps the batch rules. Each case names its seed and step.
final class SortedPatchTests: XCTestCase {
    /// A row: its identity, its key (a JSON value's text, or `nil`: no member) and a version.
    private struct Row: Hashable {
        var id: Int
        var s: String?
        var v: Int
        var text: String { #"{"id":\#(id),\#(s.map { #""s":\#($0),"# } ?? "")"v":\#(v)}"# }
    }

    private struct Group: Hashable {
        var id: String
        var rank: Int
        var rows: [Row]
        var header: String { #"{"id":"\#(id)","rank":\#(rank),"items":[]}"# }
    }

    /// Keys of every kind, to be compared as §14 says.
    private static let keys: [String?] = [nil, "null", "false", "true", "-3", "0", "2.5", "7", "1e3", #""a""#, #""b""#, #""ab""#]

    /// The model of `-s` then the identity: a key's rank and value, larger first.
    private static func comesFirst(_ left: Row, _ right: Row) -> Bool {
        let (a, b) = (rank(left.s), rank(right.s))
        if a.rank != b.rank { return a.rank > b.rank }
        if a.number != b.number { return a.number > b.number }
        if a.string != b.string { return a.string > b.string }
        return left.id < right.id
    }

    private static func rank(_ key: String?) -> (rank: Int, number: Double, string: String) {
        switch key {
        case nil, "null": (0, 0, "")
        case "false": (1, 0, "")
        case "true": (2, 0, "")
        case let key? where key.hasPrefix("\""): (4, 0, String(key.dropFirst().dropLast()))
        case let key?: (3, Double(key)!, "")
        }
    }

    private static func settings(sections: Bool) -> FeedSettings {
        var settings = FeedSettings(idKey: "id", uniqueIdentities: true)
        settings.order = CollectionOrder(rows: try! SortOrder(parsing: "-s"), sections: sections ? try! SortOrder(parsing: "rank") : nil)
        return settings
    }

    func testRandomSortedListPatchesPlaceRowsByTheirKeys() throws {
        for seed in UInt64(1)...30 {
            var random = SplitMix64(state: 500 + seed)
            var rows = (0..<random.below(25)).map { Row(id: $0, s: Self.keys[random.below(Self.keys.count)], v: 0) }.sorted(by: Self.comesFirst)
            var nextID = 1000
            for step in 0..<30 {
                let old = rows
                var ops: [String] = []
                for _ in 0...random.below(5) { ops.append(Self.rowOp(&rows, random: &random, step: step, nextID: &nextID, section: nil)) }
                rows.sort(by: Self.comesFirst)
                let context = "seed \(seed), step \(step): \(ops)"
                let change = try planned(ops, over: "[" + old.map(\.text).joined(separator: ",") + "]", settings: Self.settings(sections: false))
                guard case .list(let batch) = change.batch else { return XCTFail("not a list's batch: \(context)") }
                let values = BatchValues<ListHeader, Row>(
                    insertedRows: batch.rows.inserted.map { rows[$0] },
                    reloadedRows: batch.rows.reloaded.map { index in rows.first { $0.id == old[index].id }! }
                )
                XCTAssertEqual(try batch.apply(to: old, values: values, identity: \.id), rows, context)
                let section = { (rows: [Row]) in [Section(header: ListHeader(), items: rows)] }
                XCTAssertEqual(brokenRules(batch.sectioned, old: section(old), new: section(rows), identity: \.id), [], context)
            }
        }
    }

    func testRandomSortedSectionedPatchesPlaceRowsAndSectionsByTheirKeys() throws {
        for seed in UInt64(1)...15 {
            var random = SplitMix64(state: 900 + seed)
            var groups = (0..<random.below(5)).map { index in
                Group(id: "g\(index)", rank: random.below(8), rows: (0..<random.below(6)).map { Row(id: index * 100 + $0, s: Self.keys[random.below(Self.keys.count)], v: 0) })
            }
            Self.sort(&groups)
            var nextID = 10_000
            for step in 0..<30 {
                let old = groups
                var ops: [String] = []
                for _ in 0...random.below(3) { ops.append(Self.sectionedOp(&groups, random: &random, step: step, nextID: &nextID)) }
                Self.sort(&groups)
                let context = "seed \(seed), step \(step): \(ops)"
                let change = try planned(ops, over: Self.text(old), settings: Self.settings(sections: true))
                guard case .sectioned(let batch) = change.batch else { return XCTFail("not a sectioned batch: \(context)") }
                let section = { (group: Group) in Section(header: group.header, items: group.rows) }
                let row = { (path: RowPath) in groups.flatMap(\.rows).first { $0.id == old[path.section].rows[path.row].id }! }
                let values = BatchValues<String, Row>(
                    insertedRows: batch.rows.inserted.map { groups[$0.section].rows[$0.row] },
                    reloadedRows: batch.rows.reloaded.map(row),
                    insertedSections: batch.sections.inserted.map { section(groups[$0]) },
                    updatedHeaders: batch.sections.updated.map { groups[$0].header }
                )
                let applied = try batch.apply(to: old.map(section), values: values, identity: \.id)
                XCTAssertEqual(applied.map(\.items), groups.map(\.rows), context)
                XCTAssertEqual(applied.map(\.header), groups.map(\.header), context)
                XCTAssertEqual(brokenRules(batch, old: old.map(section), new: groups.map(section), identity: \.id), [], context)
            }
        }
    }

    /// Positions, `move` and `moveSection` are refused on a sorted feed, naming the op; a key
    /// that does not sort is `invalidSortKey` naming the row.
    func testPlacingOpsAndKeysThatDoNotSortAreRefused() throws {
        let list = #"[{"id":1,"s":5},{"id":2,"s":3}]"#
        let sections = #"{"sections":[{"id":"a","rank":1,"items":[{"id":1,"s":5}]}]}"#
        let cases: [(ops: [String], text: String, reason: PatchRefusal.Reason, detail: String)] = [
            ([#"{"op":"remove","id":2}"#, #"{"op":"upsert","item":{"id":3,"s":1},"after":1}"#], list, .invalidShape, "sorted (orderBy=-s)"),
            ([#"{"op":"move","id":1,"before":2}"#], list, .invalidShape, "sorted (orderBy=-s)"),
            ([#"{"op":"upsert","item":{"id":3,"s":[1]}}"#], list, .invalidSortKey, #"row {"id":3,"s":[1]}: its "s" is an array"#),
            ([#"{"op":"merge","id":1,"patch":{"s":{"a":1}}}"#], list, .invalidSortKey, #"its "s" is an object"#),
            ([#"{"op":"moveSection","id":"a","at":"start"}"#], sections, .invalidShape, "sorted (sectionOrderBy=rank)"),
            ([#"{"op":"upsertSection","item":{"id":"b","rank":0},"at":"start"}"#], sections, .invalidShape, "sorted (sectionOrderBy=rank)"),
            ([#"{"op":"upsertSection","item":{"id":"b","rank":[0]}}"#], sections, .invalidSortKey, #"its "rank" is an array"#),
            ([#"{"op":"upsert","section":"a","item":{"id":2,"s":0},"at":"end"}"#], sections, .invalidShape, "sorted (orderBy=-s)"),
        ]
        for (ops, text, reason, detail) in cases {
            XCTAssertThrowsError(try planned(ops, over: text, settings: Self.settings(sections: text.hasPrefix("{")))) { error in
                guard case FeedError.patchRefused(let refusal) = error else { return XCTFail("\(ops): \(error)") }
                XCTAssertEqual(refusal.reason, reason, "\(ops)")
                XCTAssertEqual(refusal.op, ops.count - 1, "\(ops)")
                XCTAssertTrue(refusal.detail.contains(detail), "\(ops): \(refusal.detail)")
            }
        }
    }

    // MARK: Planning

    private func planned(_ ops: [String], over text: String, settings: FeedSettings) throws -> PatchChange {
        let snapshot = try Snapshot(text: Array(text.utf8), idKey: "id")
        let patch = try FeedPatch(body: Array(#"{"ops":[\#(ops.joined(separator: ","))]}"#.utf8))
        return try PatchRows(of: snapshot).patched(by: patch, settings: settings).change
    }

    private static func sort(_ groups: inout [Group]) {
        for index in groups.indices { groups[index].rows.sort(by: comesFirst) }
        groups.sort { $0.rank != $1.rank ? $0.rank < $1.rank : $0.id < $1.id }
    }

    private static func text(_ groups: [Group]) -> String {
        let sections = groups.map { #"{"id":"\#($0.id)","rank":\#($0.rank),"items":[\#($0.rows.map(\.text).joined(separator: ","))]}"# }
        return #"{"sections":[\#(sections.joined(separator: ","))]}"#
    }

    // MARK: Random ops, applied to the model

    /// A row op on `rows` (of the section `section` names, when it is one), applied to them.
    private static func rowOp(_ rows: inout [Row], random: inout SplitMix64, step: Int, nextID: inout Int, section: String?) -> String {
        let named = section.map { #","section":"\#($0)""# } ?? ""
        let key = keys[random.below(keys.count)]
        switch random.below(6) {
        case 0 where !rows.isEmpty:
            let index = random.below(rows.count)
            rows[index].s = key
            return #"{"op":"upsert","item":\#(rows[index].text)\#(named)}"#
        case 1 where !rows.isEmpty:
            let index = random.below(rows.count)
            rows[index].v = step + 1
            return #"{"op":"upsert","item":\#(rows[index].text)\#(named)}"#
        case 2 where !rows.isEmpty:
            let index = random.below(rows.count)
            // A merge patch's null takes the member away.
            rows[index].s = key == "null" ? nil : key
            return #"{"op":"merge","id":\#(rows[index].id),"patch":{"s":\#(key ?? "null")}\#(named)}"#
        case 3 where !rows.isEmpty:
            let row = rows.remove(at: random.below(rows.count))
            return #"{"op":"remove","id":\#(row.id)\#(named)}"#
        default:
            nextID += 1
            rows.append(Row(id: nextID, s: key, v: step))
            return #"{"op":"upsert","item":\#(rows.last!.text)\#(named)}"#
        }
    }

    private static func sectionedOp(_ groups: inout [Group], random: inout SplitMix64, step: Int, nextID: inout Int) -> String {
        switch random.below(8) {
        case 0:
            nextID += 1
            let rows = (0..<random.below(4)).map { Row(id: nextID * 10 + $0, s: keys[random.below(keys.count)], v: step) }
            groups.append(Group(id: "n\(nextID)", rank: random.below(8), rows: rows))
            return #"{"op":"upsertSection","item":{"id":"n\#(nextID)","rank":\#(groups.last!.rank),"items":[\#(rows.map(\.text).joined(separator: ","))]}}"#
        case 1 where !groups.isEmpty:
            let index = random.below(groups.count)
            groups[index].rank = random.below(8)
            return #"{"op":"upsertSection","item":{"id":"\#(groups[index].id)","rank":\#(groups[index].rank)}}"#
        case 2 where !groups.isEmpty:
            let group = groups.remove(at: random.below(groups.count))
            return #"{"op":"removeSection","id":"\#(group.id)"}"#
        case _ where !groups.isEmpty:
            let index = random.below(groups.count)
            return rowOp(&groups[index].rows, random: &random, step: step, nextID: &nextID, section: groups[index].id)
        default:
            return sectionedOp(&groups, random: &random, step: step, nextID: &nextID)
        }
    }
}
