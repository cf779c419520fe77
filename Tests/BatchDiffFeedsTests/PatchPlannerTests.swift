import BatchDiff
@testable import BatchDiffFeeds
import BatchDiffJSON
import TestSupport
import XCTest

/// The patch planners (``ListPatchChange``, ``SectionedPatchChange``) keep the differ's rules
/// (``BatchPlanner``) from what a patch names alone. Random patches planned both ways, in
/// process: the planner's batch applies to the old collection and makes the new one, and it
/// is never larger than the differ's. Each case names its seed and step.
final class PatchPlannerTests: XCTestCase {
    /// A row: its identity and its version of content.
    private struct Row: Equatable {
        var id: Int
        var v: Int
        var text: String { #"{"id":\#(id),"v":\#(v)}"# }
    }

    private struct Group: Equatable {
        var id: String
        var rows: [Row]
    }

    private static let settings = FeedSettings(idKey: "id", uniqueIdentities: false)

    func testRandomListPatchesPlanNoMoreThanTheDiff() throws {
        for seed in UInt64(1)...40 {
            var random = SplitMix64(state: seed)
            var rows = (0..<Int(random.below(30))).map { Row(id: $0, v: 0) }
            var nextID = 1000
            for step in 0..<40 {
                let old = rows
                var ops: [String] = []
                for _ in 0...random.below(6) {
                    ops.append(Self.listOp(&rows, random: &random, step: step, nextID: &nextID))
                }
                let change = try planned(ops, over: "[" + old.map(\.text).joined(separator: ",") + "]")
                let differ = try diff(from: old.map(\.text), to: rows.map(\.text))
                let context = "seed \(seed), step \(step): \(ops)"
                XCTAssertLessThanOrEqual(change.batch.operationCount, differ.operationCount, context)
                guard case .list(let batch) = change.batch else { return XCTFail("not a list's batch: \(context)") }
                let values = BatchValues<ListHeader, Row>(
                    insertedRows: batch.rows.inserted.map { rows[$0] },
                    reloadedRows: batch.rows.reloaded.map { index in rows.first { $0.id == old[index].id }! }
                )
                XCTAssertEqual(try batch.apply(to: old, values: values, identity: \.id), rows, context)
            }
        }
    }

    func testRandomSectionedPatchesPlanNoMoreThanTheDiff() throws {
        for seed in UInt64(1)...12 {
            var random = SplitMix64(state: 100 + seed)
            var groups = (0..<Int(random.below(5))).map { section in
                Group(id: "s\(section)", rows: (0..<random.below(6)).map { Row(id: section * 100 + $0, v: 0) })
            }
            var nextID = 10_000
            for step in 0..<40 {
                let old = groups
                var ops: [String] = []
                for _ in 0...random.below(3) {
                    ops.append(Self.sectionedOp(&groups, random: &random, step: step, nextID: &nextID))
                }
                let change = try planned(ops, over: Self.text(old))
                let differ = try diff(from: Self.text(old), to: Self.text(groups))
                let context = "seed \(seed), step \(step): \(ops)"
                XCTAssertLessThanOrEqual(change.batch.operationCount, differ.operationCount, context)
                guard case .sectioned(let batch) = change.batch else { return XCTFail("not a sectioned batch: \(context)") }
                let section = { (group: Group) in Section(header: group.id, items: group.rows) }
                let row = { (path: RowPath) in groups.flatMap(\.rows).first { $0.id == old[path.section].rows[path.row].id }! }
                let values = BatchValues<String, Row>(
                    insertedRows: batch.rows.inserted.map { groups[$0.section].rows[$0.row] },
                    reloadedRows: batch.rows.reloaded.map(row),
                    insertedSections: batch.sections.inserted.map { section(groups[$0]) },
                    updatedHeaders: batch.sections.updated.map { groups[$0].id }
                )
                let applied = try batch.apply(to: old.map(section), values: values, identity: \.id)
                XCTAssertEqual(applied.map { Group(id: $0.header, rows: $0.items) }, groups, context)
            }
        }
    }

    // MARK: Planning both ways

    /// The planner's change of the collection `text` by the ops `ops`.
    private func planned(_ ops: [String], over text: String) throws -> PatchChange {
        let snapshot = try Snapshot(text: Array(text.utf8), idKey: "id")
        let patch = try FeedPatch(body: Array(#"{"ops":[\#(ops.joined(separator: ","))]}"#.utf8))
        return try PatchRows(of: snapshot).patched(by: patch, settings: Self.settings).change
    }

    /// The differ's batch from `old` to `new` (texts of a list's rows, or of collections).
    private func diff(from old: [String], to new: [String]) throws -> JSONBatch {
        try diff(from: "[" + old.joined(separator: ",") + "]", to: "[" + new.joined(separator: ",") + "]")
    }

    private func diff(from old: String, to new: String) throws -> JSONBatch {
        let (before, after) = (try Snapshot(text: Array(old.utf8), idKey: "id"), try Snapshot(text: Array(new.utf8), idKey: "id"))
        return try JSONBatch(from: before.collection, to: after.collection, options: DiffOptions())
    }

    // MARK: Random ops, applied to the model as the server applies them

    private static func listOp(_ rows: inout [Row], random: inout SplitMix64, step: Int, nextID: inout Int) -> String {
        switch random.below(6) {
        case 0 where !rows.isEmpty:
            let index = random.below(rows.count)
            rows[index].v = step + 1
            return #"{"op":"upsert","item":\#(rows[index].text)}"#
        case 5 where rows.count > 1:
            // A row changed and moved by one upsert.
            var row = rows.remove(at: random.below(rows.count))
            row.v = step + 1
            let at = random.below(rows.count + 1)
            rows.insert(row, at: at)
            return #"{"op":"upsert","item":\#(row.text),\#(position(at, in: rows.map(\.id), besides: row.id))}"#
        case 1 where !rows.isEmpty:
            let row = rows.remove(at: random.below(rows.count))
            return #"{"op":"remove","id":\#(row.id)}"#
        case 2 where rows.count > 1:
            let row = rows.remove(at: random.below(rows.count))
            let at = random.below(rows.count + 1)
            rows.insert(row, at: at)
            return #"{"op":"move","id":\#(row.id),\#(position(at, in: rows.map(\.id), besides: row.id))}"#
        case 3 where !rows.isEmpty:
            let index = random.below(rows.count)
            rows[index].v = step + 1
            return #"{"op":"merge","id":\#(rows[index].id),"patch":{"v":\#(step + 1)}}"#
        default:
            let at = random.below(rows.count + 1)
            let row = Row(id: nextID, v: step)
            nextID += 1
            rows.insert(row, at: at)
            return #"{"op":"upsert","item":\#(row.text),\#(position(at, in: rows.map(\.id), besides: row.id))}"#
        }
    }

    private static func sectionedOp(_ groups: inout [Group], random: inout SplitMix64, step: Int, nextID: inout Int) -> String {
        let filled = groups.indices.filter { !groups[$0].rows.isEmpty }
        switch random.below(5) {
        case 0 where !filled.isEmpty:
            let section = filled[random.below(filled.count)]
            let index = random.below(groups[section].rows.count)
            groups[section].rows[index].v = step + 1
            return #"{"op":"upsert","item":\#(groups[section].rows[index].text),"section":"\#(groups[section].id)"}"#
        case 1 where !filled.isEmpty:
            let section = filled[random.below(filled.count)]
            let row = groups[section].rows.remove(at: random.below(groups[section].rows.count))
            return #"{"op":"remove","id":\#(row.id),"section":"\#(groups[section].id)"}"#
        case 2 where !filled.isEmpty:
            // A row moved to a place in any section.
            let from = filled[random.below(filled.count)]
            let row = groups[from].rows.remove(at: random.below(groups[from].rows.count))
            let to = random.below(groups.count)
            let at = random.below(groups[to].rows.count + 1)
            groups[to].rows.insert(row, at: at)
            let place = position(at, in: groups[to].rows.map(\.id), besides: row.id)
            return #"{"op":"move","id":\#(row.id),"section":"\#(groups[to].id)",\#(place)}"#
        case 3 where groups.count < 6:
            let group = Group(id: "n\(nextID)", rows: [Row(id: nextID, v: step)])
            nextID += 1
            let at = random.below(groups.count + 1)
            groups.insert(group, at: at)
            let place = at == groups.count - 1 ? #""at":"end""# : #""before":"\#(groups[at + 1].id)""#
            return #"{"op":"upsertSection","item":{"id":"\#(group.id)","items":[\#(group.rows[0].text)]},\#(place)}"#
        case 4 where !groups.isEmpty:
            let group = groups.remove(at: random.below(groups.count))
            return #"{"op":"removeSection","id":"\#(group.id)"}"#
        default:
            guard !groups.isEmpty else { return firstSectionOp(&groups, nextID: &nextID) }
            let section = random.below(groups.count)
            let at = random.below(groups[section].rows.count + 1)
            let row = Row(id: nextID, v: step)
            nextID += 1
            groups[section].rows.insert(row, at: at)
            let place = position(at, in: groups[section].rows.map(\.id), besides: row.id)
            return #"{"op":"upsert","item":\#(row.text),"section":"\#(groups[section].id)",\#(place)}"#
        }
    }

    /// A first section, for a sectioned op drawn with none.
    private static func firstSectionOp(_ groups: inout [Group], nextID: inout Int) -> String {
        let group = Group(id: "n\(nextID)", rows: [])
        nextID += 1
        groups.append(group)
        return #"{"op":"upsertSection","item":{"id":"\#(group.id)","items":[]},"at":"end"}"#
    }

    /// The position of a row now at `at` among `ids` (its own included), by the row after it
    /// or the end.
    private static func position(_ at: Int, in ids: [Int], besides id: Int) -> String {
        at + 1 < ids.count ? #""before":\#(ids[at + 1])"# : #""at":"end""#
    }

    private static func text(_ groups: [Group]) -> String {
        #"{"sections":["# + groups.map { #"{"id":"\#($0.id)","items":["# + $0.rows.map(\.text).joined(separator: ",") + "]}" }.joined(separator: ",") + "]}"
    }
}
