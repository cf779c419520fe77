import BatchDiff
import XCTest

/// Hand-made list examples (moves, repeats, reloads), and the small cases every differ gets wrong once.
final class ListHandCaseTests: XCTestCase {
    private let letters = ["a", "b", "c", "d", "e", "f", "g", "h", "i"]
    private func rows(_ text: String) -> [Row] {
        text.map { Row(id: Int($0.unicodeScalars.first!.value)) }
    }

    func testSeedExample1InsertThreeAtTheEnd() {
        let result = diffAndJudge(rows("abcdef"), rows("abcdefghi"))
        XCTAssertEqual(result.rows, RowChanges(inserted: [6, 7, 8]))
    }

    func testSeedExample2DeleteThreeAtTheEnd() {
        XCTAssertEqual(diffAndJudge(rows("abcdef"), rows("abc")).rows, RowChanges(deleted: [3, 4, 5]))
    }

    func testSeedExample3UpdateAtIndex2IsAReload() {
        var new = rows("abcdef")
        new[2].content = 1
        XCTAssertEqual(diffAndJudge(rows("abcdef"), new).rows, RowChanges(reloaded: [2]))
    }

    func testSeedExample4MoveCToTheEnd() {
        XCTAssertEqual(diffAndJudge(rows("abcdef"), rows("abdefc")).rows, RowChanges(moved: [Move(from: 2, to: 5)]))
    }

    func testSeedExamples5And6DeleteAtTheStartInsertAtTheEnd() {
        let result = diffAndJudge(rows("abcdef"), rows("defghi"))
        XCTAssertEqual(result.rows, RowChanges(deleted: [0, 1, 2], inserted: [3, 4, 5]))
        XCTAssertEqual(result.oldCount, 6)
        XCTAssertEqual(result.newCount, 6)
    }

    func testEmptySides() {
        XCTAssertEqual(diffAndJudge([Row](), []).rows, RowChanges())
        XCTAssertEqual(diffAndJudge([], rows("ab")).rows, RowChanges(inserted: [0, 1]))
        XCTAssertEqual(diffAndJudge(rows("ab"), []).rows, RowChanges(deleted: [0, 1]))
    }

    func testMovedAndChangedRowIsDeleteAndInsert() {
        var new = rows("bca")
        new[2].content = 1
        XCTAssertEqual(diffAndJudge(rows("abc"), new).rows, RowChanges(deleted: [0], inserted: [2]))
    }

    func testMovesAreMinimalWhenOneElementTravels() {
        // Heckel as usually written moves every element between the two places; one move is enough.
        let result = diffAndJudge(rows("abcdefgh"), rows("bcdefgha"))
        XCTAssertEqual(result.rows, RowChanges(moved: [Move(from: 0, to: 7)]))
    }

    func testReversalMovesAllButOne() {
        let result = diffAndJudge(rows("abcde"), rows("edcba"))
        XCTAssertEqual(result.rows.moved.count, 4)
    }

    func testDuplicatesPairInOrderOfAppearance() {
        let result = diffAndJudge(rows("aab"), rows("baa"))
        XCTAssertEqual(result.rows, RowChanges(moved: [Move(from: 2, to: 0)]))
        XCTAssertEqual(diffAndJudge(rows("aaa"), rows("a")).rows, RowChanges(deleted: [1, 2]))
        XCTAssertEqual(diffAndJudge(rows("a"), rows("aaa")).rows, RowChanges(inserted: [1, 2]))
    }

    func testDuplicateWithChangedContentPairsByOrder() {
        var new = rows("aa")
        new[1].content = 1
        XCTAssertEqual(diffAndJudge(rows("aa"), new).rows, RowChanges(reloaded: [1]))
    }

    func testNoMovesOptionSendsDeleteAndInsert() {
        let result = diffAndJudge(rows("abc"), rows("cab"), options: DiffOptions(allowsMoves: false))
        XCTAssertEqual(result.rows, RowChanges(deleted: [2], inserted: [0]))
    }
}
