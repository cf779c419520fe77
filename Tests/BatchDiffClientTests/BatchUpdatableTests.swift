import BatchDiff
import BatchDiffClient
import TestSupport
import XCTest

/// Rows and headers with an identity and a content version.
private struct Row: Diffable, Hashable {
    var id: Int
    var content = 0
    var identity: Int { id }
}

/// The table adapter against a double that raises what UIKit would. The adapter and the
/// double live on the main actor, where XCTest runs these tests (`assumeIsolated`: Linux's
/// XCTest cannot run a `@MainActor` test class).
final class BatchUpdatableTests: XCTestCase {
    private static func randomSections(_ random: inout SplitMix64, after previous: [Section<Row, Row>]?) -> [Section<Row, Row>] {
        var sections = previous ?? []
        for _ in 0..<Int.random(in: 0...4, using: &random) {
            switch Int.random(in: 0..<8, using: &random) {
            case 0 where !sections.isEmpty: sections.remove(at: Int.random(in: 0..<sections.count, using: &random))
            case 1: sections.insert(Section(header: Row(id: Int.random(in: 0..<1000, using: &random)), items: []), at: Int.random(in: 0...sections.count, using: &random))
            case 2 where sections.count > 1: sections.swapAt(0, sections.count - 1)
            case 3 where !sections.isEmpty: sections[0].header.content += 1
            default:
                guard !sections.isEmpty else { continue }
                let section = Int.random(in: 0..<sections.count, using: &random)
                var items = sections[section].items
                switch Int.random(in: 0..<4, using: &random) {
                case 0: items.insert(Row(id: Int.random(in: 0..<60, using: &random)), at: Int.random(in: 0...items.count, using: &random))
                case 1 where !items.isEmpty: items.remove(at: Int.random(in: 0..<items.count, using: &random))
                case 2 where !items.isEmpty: items[Int.random(in: 0..<items.count, using: &random)].content += 1
                default: items.shuffle(using: &random)
                }
                sections[section].items = items
            }
        }
        return sections
    }

    func testRandomBatchesKeepUIKitsRules() {
        MainActor.assumeIsolated {
            var random = SplitMix64(state: 13)
            var shown: [Section<Row, Row>] = []
            var model = shown
            let view = UIKitRulesView(showing: []) { model.map(\.items.count) }
            for step in 0..<3000 {
                let next = Self.randomSections(&random, after: shown)
                let update = BatchUpdate.sectioned(batch(from: shown, to: next))
                // Every fifth changed row's cell must be rebuilt: reloaded; the others reconfigured.
                let rebuilding = { (path: RowPath) in shown[path.section].items[path.row].id % 5 == 0 }
                update.perform(on: view, rebuilding: rebuilding) { model = next }
                XCTAssertNil(view.exception, "step \(step)")
                if view.exception != nil { return }
                if let reloaded = update.sectionedBatch?.rows.reloaded, !reloaded.isEmpty {
                    // Reconfigured after the batch where each changed row then stands: the
                    // same row, with its new content.
                    let kept = reloaded.filter { !rebuilding($0) }
                    XCTAssertEqual(view.lastReconfigured.count, kept.count, "step \(step)")
                    for (old, new) in zip(kept, view.lastReconfigured) {
                        XCTAssertEqual(next[new.section].items[new.row].id, shown[old.section].items[old.row].id, "step \(step): \(old) -> \(new)")
                        XCTAssertNotEqual(next[new.section].items[new.row], shown[old.section].items[old.row], "step \(step): changed content")
                    }
                    XCTAssertEqual(view.lastReloaded, reloaded.filter(rebuilding), "step \(step)")
                }
                XCTAssertEqual(view.displayedRowCounts, next.map(\.items.count), "step \(step)")
                shown = next
            }
            XCTAssertEqual(view.reloads, 0, "no batch needed a reload")
        }
    }

    func testListBatchesKeepUIKitsRules() {
        MainActor.assumeIsolated {
            var random = SplitMix64(state: 5)
            var shown: [Row] = []
            var model = shown
            let view = UIKitRulesView(showing: [0]) { [model.count] }
            for step in 0..<2000 {
                var next = shown.filter { _ in Int.random(in: 0..<10, using: &random) > 0 }
                next += (0..<Int.random(in: 0...3, using: &random)).map { _ in Row(id: Int.random(in: 0..<80, using: &random)) }
                next.shuffle(using: &random)
                BatchUpdate.list(batch(from: shown, to: next)).perform(on: view) { model = next }
                XCTAssertNil(view.exception, "step \(step)")
                shown = next
            }
        }
    }

    /// A view whose rows drifted from what the server diffed reloads instead of crashing.
    func testADriftedViewReloads() {
        MainActor.assumeIsolated {
            var model = [3]
            let view = UIKitRulesView(showing: [2]) { model }
            let update = BatchUpdate.list(ListBatch(rows: RowChanges(deleted: [0]), oldCount: 3, newCount: 2))
            update.perform(on: view) { model = [2] }
            XCTAssertNil(view.exception)
            XCTAssertEqual(view.reloads, 1)
            XCTAssertEqual(view.displayedRowCounts, [2])
        }
    }

    /// The double raises what UIKit would for a batch whose counts do not add up, so the
    /// tests above can fail.
    func testTheDoubleRaisesOnABatchThatBreaksTheRules() {
        MainActor.assumeIsolated {
            var model = [3]
            let view = UIKitRulesView(showing: [3]) { model }
            BatchUpdate.list(ListBatch(rows: RowChanges(deleted: [0]), oldCount: 3, newCount: 2)).perform(on: view) { model = [3] }
            XCTAssertNotNil(view.exception)
            let moveAndReload = SectionedBatch(
                sections: SectionChanges(), rows: RowChanges(reloaded: [RowPath(section: 0, row: 0)], moved: [Move(from: RowPath(section: 0, row: 0), to: RowPath(section: 1, row: 0))]),
                oldCounts: [1, 1], newCounts: [0, 2]
            )
            // A batch that reloads a row it moves never reaches the view: it reloads instead.
            for rebuilding in [true, false] {
                let view = UIKitRulesView(showing: [1, 1]) { [0, 2] }
                BatchUpdate.sectioned(moveAndReload).perform(on: view, rebuilding: { _ in rebuilding }) {}
                XCTAssertNil(view.exception)
                XCTAssertEqual(view.reloads, 1)
            }
        }
    }

    /// Header changes are refreshed after the batch, at their new indexes; a reload answer
    /// reloads.
    func testHeadersAreRefreshedAfterTheBatchAndReloadsReload() {
        MainActor.assumeIsolated {
            let old = [Section(header: Row(id: 1), items: [Row(id: 10)]), Section(header: Row(id: 2), items: [])]
            let new = [Section(header: Row(id: 2, content: 1), items: []), Section(header: Row(id: 1), items: [Row(id: 10)])]
            var model = old.map(\.items.count)
            let view = UIKitRulesView(showing: model) { model }
            BatchUpdate.sectioned(batch(from: old, to: new)).perform(on: view) { model = new.map(\.items.count) }
            XCTAssertNil(view.exception)
            XCTAssertEqual(view.refreshedHeaders, [0])
            BatchUpdate.reload(oldCounts: [0, 1], newCounts: [5]).perform(on: view) { model = [5] }
            XCTAssertEqual(view.reloads, 1)
            XCTAssertEqual(view.displayedRowCounts, [5])
        }
    }
}
