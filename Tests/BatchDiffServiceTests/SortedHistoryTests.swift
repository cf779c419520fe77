import BatchDiff
import Foundation
import TestSupport
import XCTest

/// A sorted sectioned feed through random histories (docs/feeds.md §3.2, §3.1 rule 16):
/// `PUT`s that list sections and rows in shuffled order, and `PATCH`es whose upserts take no
/// position (rows whose keys change and move, rows reloaded, inserted, removed, merged;
/// sections re-ranked, added with unsorted items, removed), against a model of the order
/// written here. After each write, `GET` answers the model's sorted collection, and the
/// `changes` answer from the version before, applied to the model's collection before,
/// gives it and breaks no batch rule.
final class SortedHistoryTests: ServerTestCase {
    private struct Row {
        var id: Int
        var s: Int
        var v = 0
        var object: [String: Any] { ["id": id, "s": s, "v": v] }
    }

    private struct Group {
        var id: String
        var rank: Int
        var rows: [Row]
    }

    /// The model's order: sections by `rank`, then identity; rows by `-s`, then identity.
    private func sorted(_ groups: [Group]) -> [Group] {
        groups.map { group in
            var group = group
            group.rows.sort { $0.s != $1.s ? $0.s > $1.s : $0.id < $1.id }
            return group
        }.sorted { $0.rank != $1.rank ? $0.rank < $1.rank : $0.id < $1.id }
    }

    private func document(_ groups: [Group]) -> [String: Any] {
        ["sections": groups.map { ["id": $0.id, "rank": $0.rank, "items": $0.rows.map(\.object)] as [String: Any] }]
    }

    func testRandomSortedSectionedHistories() throws {
        let client = try startServer().client
        var random = SplitMix64(state: 0x50_4711)
        var nextID = 1000
        var groups = (0..<4).map { index in
            Group(id: "g\(index)", rank: random.below(5), rows: (0..<random.below(6)).map { Row(id: index * 100 + $0, s: random.below(10)) })
        }
        var shuffled = groups.shuffled(using: &random)
        for index in shuffled.indices { shuffled[index].rows.shuffle(using: &random) }
        var version = assertVersion(try client.put("/feeds/board?orderBy=-s&sectionOrderBy=rank", jsonText(document(shuffled))))
        for step in 0..<40 {
            let before = sorted(groups)
            let response: HTTPResult
            if step % 3 == 0 {
                // A whole write, in no order.
                for _ in 0..<3 {
                    let g = random.below(groups.count)
                    switch random.below(4) {
                    case 0 where !groups[g].rows.isEmpty: groups[g].rows[random.below(groups[g].rows.count)].s = random.below(10)
                    case 1 where !groups[g].rows.isEmpty: groups[g].rows.remove(at: random.below(groups[g].rows.count))
                    case 2: groups[g].rank = random.below(5)
                    default:
                        nextID += 1
                        groups[g].rows.append(Row(id: nextID, s: random.below(10)))
                    }
                }
                var shuffled = groups.shuffled(using: &random)
                for index in shuffled.indices { shuffled[index].rows.shuffle(using: &random) }
                response = try client.put("/feeds/board", jsonText(document(shuffled)))
            } else {
                var ops: [[String: Any]] = []
                for _ in 0..<(1 + random.below(3)) {
                    let g = random.below(groups.count)
                    let section = groups[g].id
                    switch random.below(7) {
                    case 0 where !groups[g].rows.isEmpty:
                        let r = random.below(groups[g].rows.count)
                        groups[g].rows[r].s = random.below(10)
                        ops.append(["op": "upsert", "section": section, "item": groups[g].rows[r].object])
                    case 1 where !groups[g].rows.isEmpty:
                        let r = random.below(groups[g].rows.count)
                        groups[g].rows[r].v += 1
                        ops.append(["op": "upsert", "section": section, "item": groups[g].rows[r].object])
                    case 2 where !groups[g].rows.isEmpty:
                        let r = random.below(groups[g].rows.count)
                        groups[g].rows[r].s = random.below(10)
                        ops.append(["op": "merge", "section": section, "id": groups[g].rows[r].id, "patch": ["s": groups[g].rows[r].s]])
                    case 3 where !groups[g].rows.isEmpty:
                        let row = groups[g].rows.remove(at: random.below(groups[g].rows.count))
                        ops.append(["op": "remove", "section": section, "id": row.id])
                    case 4:
                        groups[g].rank = random.below(5)
                        ops.append(["op": "upsertSection", "item": ["id": section, "rank": groups[g].rank]])
                    case 5 where groups.count < 7:
                        nextID += 1
                        let rows = (0..<random.below(4)).map { Row(id: nextID * 10 + $0, s: random.below(10)) }
                        groups.append(Group(id: "n\(nextID)", rank: random.below(5), rows: rows))
                        ops.append(["op": "upsertSection", "item": ["id": "n\(nextID)", "rank": groups.last!.rank, "items": rows.map(\.object)]])
                    default:
                        nextID += 1
                        groups[g].rows.append(Row(id: nextID, s: random.below(10)))
                        ops.append(["op": "upsert", "section": section, "item": groups[g].rows.last!.object])
                    }
                }
                response = try client.request("PATCH", "/feeds/board", body: Array(jsonText(["ops": ops]).utf8))
            }
            let after = sorted(groups)
            let context = "step \(step): \(response.text.prefix(300))"
            guard assertJSON(response)["changed"] as? Bool == true else { continue }
            XCTAssertEqual(assertJSON(try client.get("/feeds/board"))["data"].map(canonicalJSON), canonicalJSON(document(after)), context)
            let answer = assertJSON(try client.get("/feeds/board/changes?since=\(version)"))
            do {
                let batch = try decodeSectionedBatch(answer)
                let (old, new) = (sectionElements(document(before)), sectionElements(document(after)))
                XCTAssertEqual(try batch.apply(to: old, values: try decodeSectionedValues(answer)), new, context)
                XCTAssertEqual(brokenRules(batch, old: old, new: new, identity: \.identity), [], context)
            } catch {
                XCTFail("\(error); \(context)")
            }
            version = int(answer["to"]) ?? version
            if testRun?.failureCount ?? 0 > 0 { return }
        }
    }
}
