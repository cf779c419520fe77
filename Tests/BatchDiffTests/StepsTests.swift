import BatchDiff
import XCTest

/// Steps for adapters (docs/batch-format.md §7): hand cases; the random cases of
/// PropertyTests judge every batch's steps too (StepJudge.swift).
final class StepsTests: XCTestCase {
    private func rows(_ ids: [Int]) -> [Row] { ids.map { Row(id: $0) } }

    /// The list example of docs/batch-format.md §2.1: a, b, c, d becomes d, a, b, e.
    func testTheListExample() throws {
        let result = batch(from: rows([1, 2, 3, 4]), to: rows([4, 1, 2, 5]))
        XCTAssertEqual(try result.steps(), [.remove(at: 2, count: 1), .move(from: 2, to: 0), .insert(at: 3, count: 1)])
    }

    /// Adjacent positions make one range; changes come last, at their final positions.
    func testRangesAndChanges() throws {
        let old = rows([1, 2, 3, 4, 5, 6])
        var new = rows([1, 4, 7, 8, 5, 6])
        new[4].content = 1
        new[5].content = 1
        XCTAssertEqual(try batch(from: old, to: new).steps(), [.remove(at: 1, count: 2), .insert(at: 2, count: 2), .change(at: 4, count: 2)])
    }

    /// A section is a header position followed by its rows: a new section inserts its
    /// header and rows at once, a changed header is a change.
    func testSectionsAreHeadersFollowedByTheirRows() throws {
        let old = [TestSection(header: Header(id: 1), items: rows([10, 11]))]
        let new = [TestSection(header: Header(id: 1, title: 1), items: rows([10, 11])), TestSection(header: Header(id: 2), items: rows([20]))]
        XCTAssertEqual(try batch(from: old, to: new).steps(), [.insert(at: 3, count: 2), .change(at: 0, count: 1)])
    }

    /// A long list reversed: every element but one moves, each move found in O(log n) (it
    /// took time quadratic in the length before, minutes for this list).
    func testALongReversedList() throws {
        let old = rows(Array(0..<50_000))
        let new = Array(old.reversed())
        let steps = try batch(from: old, to: new).steps()
        XCTAssertEqual(steps.count, 49_999)
        let problems = stepProblems(steps, old: old.map(FlatElement.row), new: new.map(FlatElement.row))
        XCTAssertTrue(problems.isEmpty, "\(problems.prefix(3))")
    }

    /// The judge of the random cases fails steps that do not give the new list.
    func testTheJudgeCatchesWrongSteps() {
        let old = flatList([TestSection(header: Header(id: 0), items: rows([1, 2]))], headers: false)
        var changed = rows([1, 2])
        changed[1].content = 1
        let new = flatList([TestSection(header: Header(id: 0), items: changed)], headers: false)
        XCTAssertFalse(stepProblems([], old: old, new: new).isEmpty, "a change left out")
        XCTAssertFalse(stepProblems([.move(from: 0, to: 1), .change(at: 1, count: 1)], old: old, new: new).isEmpty, "a wrong move")
        XCTAssertTrue(stepProblems([.change(at: 1, count: 1)], old: old, new: new).isEmpty)
    }
}
