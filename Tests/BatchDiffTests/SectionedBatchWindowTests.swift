import TestSupport
import BatchDiff
import XCTest

/// A sectioned batch seen through windows of sections (``SectionedBatchWindow``): for random
/// pairs of collections and every window, the window's batch applied to the old window's
/// sections (with the new window's values) gives the new window's, and breaks no rule; each
/// reloaded row's path is where its new content stands.
final class SectionedBatchWindowTests: XCTestCase {
    private func judge(_ old: [TestSection], _ new: [TestSection], offset: Int, limit: Int, file: StaticString = #filePath, line: UInt = #line) {
        judge(SectionedBatchWindow(batch(from: old, to: new), offset: offset, limit: limit), old, new, offset: offset, limit: limit, file: file, line: line)
    }

    /// `window`, the window of sections `offset..<offset+limit` from `old` to `new`.
    private func judge(
        _ window: SectionedBatchWindow, _ old: [TestSection], _ new: [TestSection], offset: Int, limit: Int, file: StaticString = #filePath, line: UInt = #line
    ) {
        judge(window, old, new, oldOffset: offset, newOffset: offset, limit: limit, file: file, line: line)
    }

    /// `window`, from the window of sections `oldOffset..<oldOffset+limit` of `old` to the
    /// window `newOffset..<newOffset+limit` of `new`.
    private func judge(
        _ window: SectionedBatchWindow, _ old: [TestSection], _ new: [TestSection], oldOffset: Int, newOffset: Int, limit: Int,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        let (oldWindow, newWindow) = (Array(old.dropFirst(oldOffset).prefix(limit)), Array(new.dropFirst(newOffset).prefix(limit)))
        let context = "window \(oldOffset) -> \(newOffset), \(limit) of \(old.map(describe)) -> \(new.map(describe)): \(window.batch)"
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
            let new = randomlyEdited(old, fresh: &fresh, using: &rng)
            let longest = max(old.count, new.count)
            for offset in 0...longest + 1 {
                judge(old, new, offset: offset, limit: Int.random(in: 0...longest + 2, using: &rng))
            }
            if testRun?.failureCount ?? 0 > 0 { return }
        }
    }

    /// Windows of sections across several versions
    /// (``SectionedBatchWindow/init(across:offset:limit:)``), through random histories of
    /// two to four versions.
    func testRandomHistoriesAcrossVersions() throws {
        var rng = SplitMix64(state: 0x5EC7_ACC0)
        var fresh = 1000
        for round in 0..<400 {
            var nextRow = 0
            var versions: [[TestSection]] = [(0..<Int.random(in: 0...7, using: &rng)).map { section in
                TestSection(header: Header(id: section), items: (0..<Int.random(in: 0...4, using: &rng)).map { _ in
                    nextRow += 1
                    return Row(id: round % 2 == 0 ? nextRow : Int.random(in: 0..<6, using: &rng))
                })
            }]
            for _ in 0..<Int.random(in: 2...4, using: &rng) { versions.append(randomlyEdited(versions.last!, fresh: &fresh, using: &rng)) }
            let batches = zip(versions, versions.dropFirst()).map { batch(from: $0, to: $1) }
            let longest = versions.map(\.count).max()!
            for offset in 0...longest + 1 {
                let limit = Int.random(in: 0...longest + 2, using: &rng)
                let window = try SectionedBatchWindow(across: batches, offset: offset, limit: limit)
                judge(window, versions.first!, versions.last!, offset: offset, limit: limit)
            }
            if testRun?.failureCount ?? 0 > 0 { return }
        }
    }

    /// Windows of sections whose first section moved, from one window of the first version
    /// to another of the last, across one to four versions.
    func testRandomHistoriesBetweenWindowsAtTwoOffsets() throws {
        var rng = SplitMix64(state: 0x5EC7_0FF5)
        var fresh = 1000
        for round in 0..<300 {
            var nextRow = 0
            var versions: [[TestSection]] = [(0..<Int.random(in: 0...7, using: &rng)).map { section in
                TestSection(header: Header(id: section), items: (0..<Int.random(in: 0...4, using: &rng)).map { _ in
                    nextRow += 1
                    return Row(id: round % 2 == 0 ? nextRow : Int.random(in: 0..<6, using: &rng))
                })
            }]
            for _ in 0..<Int.random(in: 1...4, using: &rng) { versions.append(randomlyEdited(versions.last!, fresh: &fresh, using: &rng)) }
            let batches = zip(versions, versions.dropFirst()).map { batch(from: $0, to: $1) }
            for _ in 0..<6 {
                let (oldOffset, newOffset) = (Int.random(in: 0...versions.first!.count + 1, using: &rng), Int.random(in: 0...versions.last!.count + 1, using: &rng))
                let limit = Int.random(in: 0...5, using: &rng)
                let window = try SectionedBatchWindow(across: batches, oldOffset: oldOffset, newOffset: newOffset, limit: limit)
                judge(window, versions.first!, versions.last!, oldOffset: oldOffset, newOffset: newOffset, limit: limit)
            }
            if testRun?.failureCount ?? 0 > 0 { return }
        }
    }
}
