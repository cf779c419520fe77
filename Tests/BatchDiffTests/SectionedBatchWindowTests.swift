import TestSupport
import BatchDiff
import XCTest

/// A sectioned batch seen through windows of sections (``SectionedBatchWindow``): for random
/// pairs of collections and every window, the window's batch applied to the old window's
/// sections (with the new window's values) gives the new window's, and breaks no rule; each
/// reloaded row's path is where its new content stands.
final class SectionedBatchWindowTests: XCTestCase {
    private func judge(_ old: [TestSection], _ new: [TestSection], offset: Int, limit: Int, file: StaticString = #filePath, line: UInt = #line) {
        let full = batch(from: old, to: new)
        let window = SectionedBatchWindow(full, offset: offset, limit: limit)
        let slice = { (sections: [TestSection]) in Array(sections.dropFirst(offset).prefix(limit)) }
        let (oldWindow, newWindow) = (slice(old), slice(new))
        let context = "window \(offset), \(limit) of \(old.map(describe)) -> \(new.map(describe)): \(window.batch)"
        do {
            let values = try window.batch.values(from: newWindow)
            XCTAssertEqual(try window.batch.apply(to: oldWindow, values: values), newWindow, context, file: file, line: line)
            XCTAssertEqual(window.reloadedPaths.map { new[$0.section].items[$0.row] }, values.reloadedRows, "reloaded paths: \(context)", file: file, line: line)
        } catch {
            XCTFail("cannot be applied: \(error); \(context)", file: file, line: line)
        }
        let unique = [old, new].allSatisfy { sections in
            let rows = sections.flatMap(\.items).map(\.id)
            return Set(rows).count == rows.count && Set(sections.map(\.header.id)).count == sections.count
        }
        let broken = brokenRules(window.batch, old: oldWindow, new: newWindow).filter { unique || !$0.hasPrefix("no delete plus insert") }
        XCTAssert(broken.isEmpty, "broken rules \(broken): \(context)", file: file, line: line)
    }

    private func describe(_ section: TestSection) -> String { "\(section.header.id)\(section.header.title > 0 ? "'" : ""):\(section.items)" }

    func testRowsMovingAcrossTheWindowsEdgeAreDeletedOrInserted() {
        let old = sections([(0, [1, 2]), (1, [3, 4]), (2, [5])])
        // Row 3 moves from section 1 (in the window) to section 2 (out of it), row 5 the other way.
        let new = sections([(0, [1, 2]), (1, [5, 4]), (2, [3])])
        judge(old, new, offset: 1, limit: 1)
        let window = SectionedBatchWindow(batch(from: old, to: new), offset: 1, limit: 1)
        XCTAssertTrue(window.batch.sections.isEmpty, "\(window.batch)")
        XCTAssertEqual(window.batch.rows.operationCount, 2, "row 3 deleted, row 5 inserted: \(window.batch)")
    }

    func testRandomCollectionsThroughEveryWindow() {
        var rng = SplitMix64(state: 0x5EC7_1015)
        var fresh = 1000
        for round in 0..<800 {
            let unique = round % 2 == 0
            var nextRow = 0
            let old: [TestSection] = (0..<Int.random(in: 0...7, using: &rng)).map { section in
                TestSection(header: Header(id: section), items: (0..<Int.random(in: 0...4, using: &rng)).map { _ in
                    nextRow += 1
                    return Row(id: unique ? nextRow : Int.random(in: 0..<6, using: &rng))
                })
            }
            var new = old
            for _ in 0..<Int.random(in: 0...6, using: &rng) {
                switch Int.random(in: 0..<7, using: &rng) {
                case 0 where !new.isEmpty: new.remove(at: Int.random(in: new.indices, using: &rng))
                case 1:
                    new.insert(TestSection(header: Header(id: fresh), items: [Row(id: fresh + 1)]), at: Int.random(in: 0...new.count, using: &rng))
                    fresh += 2
                case 2 where !new.isEmpty: new.insert(new.remove(at: Int.random(in: new.indices, using: &rng)), at: Int.random(in: 0...new.count, using: &rng))
                case 3 where !new.isEmpty: new[Int.random(in: new.indices, using: &rng)].header.title += 1
                case 4 where !new.isEmpty:
                    let section = Int.random(in: new.indices, using: &rng)
                    new[section].items.insert(Row(id: fresh), at: Int.random(in: 0...new[section].items.count, using: &rng))
                    fresh += 1
                case 5 where !new.isEmpty:
                    // A row moves, within its section or to another.
                    let from = Int.random(in: new.indices, using: &rng)
                    guard !new[from].items.isEmpty else { break }
                    let row = new[from].items.remove(at: Int.random(in: new[from].items.indices, using: &rng))
                    let to = Int.random(in: new.indices, using: &rng)
                    new[to].items.insert(row, at: Int.random(in: 0...new[to].items.count, using: &rng))
                case 6 where !new.isEmpty:
                    let section = Int.random(in: new.indices, using: &rng)
                    if !new[section].items.isEmpty { new[section].items[Int.random(in: new[section].items.indices, using: &rng)].content += 1 }
                default: break
                }
            }
            let longest = max(old.count, new.count)
            for offset in 0...longest + 1 {
                judge(old, new, offset: offset, limit: Int.random(in: 0...longest + 2, using: &rng))
            }
            if testRun?.failureCount ?? 0 > 0 { return }
        }
    }
}
