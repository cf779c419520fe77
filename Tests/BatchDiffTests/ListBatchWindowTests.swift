import TestSupport
import BatchDiff
import XCTest

/// A list batch seen through windows (``ListBatchWindow``): for random pairs of lists and
/// every window, at the top, in the middle, over the end and past it, the window's batch
/// applied to the old window (with the new window's values) gives the new window, and
/// breaks no rule; each reloaded row's position is where its new content stands.
final class ListBatchWindowTests: XCTestCase {
    private func judge(_ old: [Row], _ new: [Row], offset: Int, limit: Int, file: StaticString = #filePath, line: UInt = #line) {
        judge(ListBatchWindow(batch(from: old, to: new), offset: offset, limit: limit), old, new, offset: offset, limit: limit, file: file, line: line)
    }

    /// `window`, the window `offset..<offset+limit` from `old` to `new`.
    private func judge(_ window: ListBatchWindow, _ old: [Row], _ new: [Row], offset: Int, limit: Int, file: StaticString = #filePath, line: UInt = #line) {
        judge(window, old, new, oldOffset: offset, newOffset: offset, limit: limit, file: file, line: line)
    }

    /// `window`, from the window `oldOffset..<oldOffset+limit` of `old` to the window
    /// `newOffset..<newOffset+limit` of `new`.
    private func judge(
        _ window: ListBatchWindow, _ old: [Row], _ new: [Row], oldOffset: Int, newOffset: Int, limit: Int, file: StaticString = #filePath, line: UInt = #line
    ) {
        let (oldWindow, newWindow) = (Array(old.dropFirst(oldOffset).prefix(limit)), Array(new.dropFirst(newOffset).prefix(limit)))
        let context = "window \(oldOffset) -> \(newOffset), \(limit) of \(old) -> \(new): \(window.batch)"
        XCTAssertEqual(window.batch.oldCount, oldWindow.count, context, file: file, line: line)
        XCTAssertEqual(window.batch.newCount, newWindow.count, context, file: file, line: line)
        do {
            let values = try window.batch.values(from: newWindow)
            XCTAssertEqual(try window.batch.apply(to: oldWindow, values: values), newWindow, context, file: file, line: line)
            XCTAssertEqual(window.reloadedPositions.map { new[$0] }, values.reloadedRows, "reloaded positions: \(context)", file: file, line: line)
        } catch {
            XCTFail("cannot be applied: \(error); \(context)", file: file, line: line)
        }
        let asSections = { (rows: [Row]) in [TestSection(header: Header(id: 0), items: rows)] }
        // With repeated identities the batch may pair rows apart that the window would pair
        // (a delete and an insert where a move would do): valid, only not the smallest.
        let unique = Set(old.map(\.id)).count == old.count && Set(new.map(\.id)).count == new.count
        let broken = brokenRules(window.batch.sectioned, old: asSections(oldWindow), new: asSections(newWindow))
            .filter { unique || !$0.hasPrefix("no delete plus insert") }
        XCTAssert(broken.isEmpty, "broken rules \(broken): \(context)", file: file, line: line)
    }

    func testHandCases() {
        let rows = (0..<10).map { Row(id: $0) }
        // A row inserted above the window pushes one row out of it and one in.
        judge(rows, [Row(id: 99)] + rows, offset: 3, limit: 4)
        // A row moved from inside the window to outside it, and one from outside in.
        var moved = rows
        moved.insert(moved.remove(at: 4), at: 9)
        moved.insert(moved.remove(at: 0), at: 5)
        judge(rows, moved, offset: 3, limit: 4)
        let window = ListBatchWindow(batch(from: rows, to: moved), offset: 3, limit: 4)
        XCTAssertEqual(window.batch.rows, RowChanges(deleted: [0, 1], inserted: [2, 3]), "rows 3 and 4 leave the window, 0 and 7 enter")
        // A changed row in the window is a reload; one outside it is nothing.
        var changed = rows
        changed[5].content = 1
        changed[0].content = 1
        XCTAssertEqual(ListBatchWindow(batch(from: rows, to: changed), offset: 4, limit: 3).batch.rows, RowChanges(reloaded: [1]))
        // Windows past the end, empty, and over the whole list.
        for (offset, limit) in [(10, 5), (12, 3), (0, 0), (0, 100), (9, 1)] {
            judge(rows, moved, offset: offset, limit: limit)
        }
    }

    func testRandomListsThroughEveryWindow() {
        var rng = SplitMix64(state: 0x0FF5_E7AA)
        var fresh = 1000
        for round in 0..<1500 {
            let pool = [4, 12, 60][round % 3]
            // A third of the lists have unique identities (the smallest batches are judged there).
            let count = Int.random(in: 0...20, using: &rng)
            let old = round % 3 == 2
                ? Array((0..<pool).shuffled(using: &rng).prefix(count)).map { Row(id: $0) }
                : (0..<count).map { _ in Row(id: Int.random(in: 0..<pool, using: &rng)) }
            let new = randomlyEdited(old, fresh: &fresh, using: &rng)
            let longest = max(old.count, new.count)
            for offset in 0...longest + 1 {
                judge(old, new, offset: offset, limit: Int.random(in: 0...longest + 2, using: &rng))
            }
            if testRun?.failureCount ?? 0 > 0 { return }
        }
    }

    /// Windows across several versions (``ListBatchWindow/init(across:offset:limit:)``): the
    /// batches of a random history of two to four versions, seen through a window one after
    /// the other and made one, take the first version's window to the last one's.
    func testRandomHistoriesAcrossVersions() throws {
        var rng = SplitMix64(state: 0xACC0_55ED)
        var fresh = 1000
        for round in 0..<600 {
            let count = Int.random(in: 0...20, using: &rng)
            var versions = [round % 2 == 0
                ? (0..<count).map { Row(id: $0) }
                : (0..<count).map { _ in Row(id: Int.random(in: 0..<12, using: &rng)) }]
            for _ in 0..<Int.random(in: 2...4, using: &rng) { versions.append(randomlyEdited(versions.last!, fresh: &fresh, using: &rng)) }
            let batches = zip(versions, versions.dropFirst()).map { batch(from: $0, to: $1) }
            let longest = versions.map(\.count).max()!
            for offset in 0...longest + 1 {
                let limit = Int.random(in: 0...longest + 2, using: &rng)
                let window = try ListBatchWindow(across: batches, offset: offset, limit: limit)
                judge(window, versions.first!, versions.last!, offset: offset, limit: limit)
            }
            if testRun?.failureCount ?? 0 > 0 { return }
        }
    }

    /// Windows whose first row moved (anchored on a row, docs/feeds.md §5.3): from one
    /// window of the first version to another of the last, across one to four versions.
    func testRandomHistoriesBetweenWindowsAtTwoOffsets() throws {
        var rng = SplitMix64(state: 0x0FF5_E75)
        var fresh = 1000
        for round in 0..<400 {
            let count = Int.random(in: 0...20, using: &rng)
            var versions = [round % 2 == 0
                ? (0..<count).map { Row(id: $0) }
                : (0..<count).map { _ in Row(id: Int.random(in: 0..<12, using: &rng)) }]
            for _ in 0..<Int.random(in: 1...4, using: &rng) { versions.append(randomlyEdited(versions.last!, fresh: &fresh, using: &rng)) }
            let batches = zip(versions, versions.dropFirst()).map { batch(from: $0, to: $1) }
            for _ in 0..<8 {
                let (oldOffset, newOffset) = (Int.random(in: 0...versions.first!.count + 1, using: &rng), Int.random(in: 0...versions.last!.count + 1, using: &rng))
                let limit = Int.random(in: 0...8, using: &rng)
                let window = try ListBatchWindow(across: batches, oldOffset: oldOffset, newOffset: newOffset, limit: limit)
                judge(window, versions.first!, versions.last!, oldOffset: oldOffset, newOffset: newOffset, limit: limit)
            }
            if testRun?.failureCount ?? 0 > 0 { return }
        }
    }

    func testAcrossOneVersionIsThatVersionsWindowAndBrokenHistoriesAreRefused() throws {
        let rows = (0..<10).map { Row(id: $0) }
        let grown = [Row(id: 99)] + rows
        let one = batch(from: rows, to: grown)
        XCTAssertEqual(try ListBatchWindow(across: [one], offset: 2, limit: 3), ListBatchWindow(one, offset: 2, limit: 3))
        XCTAssertThrowsError(try ListBatchWindow(across: [], offset: 0, limit: 3))
        // The second batch starts from another list than the first one ends with.
        XCTAssertThrowsError(try ListBatchWindow(across: [one, batch(from: [Row(id: 1)], to: [])], offset: 0, limit: 3))
    }
}
