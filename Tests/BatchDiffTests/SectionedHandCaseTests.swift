import BatchDiff
import XCTest

/// The companies example (docs/batch-format.md §2.6) and a hand case for every rule of §4.
final class SectionedHandCaseTests: XCTestCase {
    func testCompaniesExample() {
        func product(_ id: Int, _ version: Int = 0) -> Row { Row(id: id, content: version) }
        let old = [
            TestSection(header: Header(id: 100), items: [product(1), product(2), product(3)]),  // Amazon
            TestSection(header: Header(id: 200), items: [product(4), product(5), product(6)]),  // Apple
            TestSection(header: Header(id: 300), items: [product(7), product(8), product(9)]),  // Blackberry
            TestSection(header: Header(id: 400), items: [product(10), product(11), product(12)]),  // Google
        ]
        let new = [
            TestSection(header: Header(id: 100), items: [product(1), product(3), product(13)]),
            TestSection(header: Header(id: 200), items: [product(4, 1), product(14), product(5, 1), product(6, 1)]),
            TestSection(header: Header(id: 400), items: [product(10), product(11), product(12), product(15)]),
            TestSection(header: Header(id: 500), items: [product(16), product(17), product(18)]),  // Microsoft
        ]
        let result = diffAndJudge(old, new)
        XCTAssertEqual(result.sections, SectionChanges(deleted: [2], inserted: [3]))
        XCTAssertEqual(result.rows, RowChanges(
            deleted: paths([(0, 1)]),
            inserted: paths([(0, 2), (1, 1), (2, 3)]),
            reloaded: paths([(1, 0), (1, 1), (1, 2)])
        ))
        XCTAssertEqual(result.oldCounts, [3, 3, 3, 3])
        XCTAssertEqual(result.newCounts, [3, 4, 4, 3])
    }

    func testHeaderChangeIsAnUpdateNotAReload() {
        var new = sections([(1, [1, 2]), (2, [3])])
        new[1].header.title = 1
        let result = diffAndJudge(sections([(1, [1, 2]), (2, [3])]), new)
        XCTAssertEqual(result.sections, SectionChanges(updated: [1]))
        XCTAssert(result.rows.isEmpty)
    }

    func testUnchangedSectionMovesAlone() {
        let result = diffAndJudge(sections([(1, [1]), (2, [2]), (3, [3])]), sections([(3, [3]), (1, [1]), (2, [2])]))
        XCTAssertEqual(result.sections, SectionChanges(moved: [Move(from: 2, to: 0)]))
        XCTAssert(result.rows.isEmpty)
    }

    func testMovingSectionWithHeaderChangeIsMovedAndUpdated() {
        var new = sections([(2, [2]), (1, [1])])
        new[0].header.title = 1
        let result = diffAndJudge(sections([(1, [1]), (2, [2])]), new)
        XCTAssertEqual(result.sections.moved.count, 1)
        XCTAssertEqual(result.sections.updated, [0])
    }

    func testSectionThatMovesAndChangesInsideStaysAndTheOtherMoves() {
        // Either section could move; the one that changes inside cannot, so the other does.
        let result = diffAndJudge(sections([(1, [1]), (2, [2])]), sections([(2, [2, 3]), (1, [1])]))
        XCTAssertEqual(result.sections, SectionChanges(moved: [Move(from: 0, to: 1)]))
        XCTAssertEqual(result.rows, RowChanges(inserted: paths([(0, 1)])))
    }

    func testSectionsThatAllMoveAndChangeAreDeletedAndInserted() {
        let result = diffAndJudge(sections([(1, [1]), (2, [2]), (3, [3])]), sections([(3, [3, 9]), (2, [2, 8]), (1, [1, 7])]))
        XCTAssertEqual(result.sections.moved, [])
        XCTAssertEqual(result.sections.deleted.count, 2)
        XCTAssertEqual(result.sections.inserted.count, 2)
    }

    func testRowLeavingADeletedSectionIsNotMoved() {
        let result = diffAndJudge(sections([(1, [1, 2]), (2, [3])]), sections([(2, [3, 1])]))
        XCTAssertEqual(result.sections, SectionChanges(deleted: [0]))
        XCTAssertEqual(result.rows, RowChanges(inserted: paths([(0, 1)])))
    }

    func testRowEnteringAnInsertedSectionIsNotMoved() {
        let result = diffAndJudge(sections([(1, [1, 2])]), sections([(1, [2]), (3, [1])]))
        XCTAssertEqual(result.sections, SectionChanges(inserted: [1]))
        XCTAssertEqual(result.rows, RowChanges(deleted: paths([(0, 0)])))
    }

    func testRowMovesAcrossStayingSections() {
        let result = diffAndJudge(sections([(1, [1, 2]), (2, [3])]), sections([(1, [2]), (2, [3, 1])]))
        XCTAssertEqual(result.rows, RowChanges(moved: [Move(from: RowPath(section: 0, row: 0), to: RowPath(section: 1, row: 1))]))
    }

    func testRowThatMovesAcrossSectionsAndChangesIsDeleteAndInsert() {
        var new = sections([(1, [2]), (2, [3, 1])])
        new[1].items[1].content = 1
        let result = diffAndJudge(sections([(1, [1, 2]), (2, [3])]), new)
        XCTAssertEqual(result.rows, RowChanges(deleted: paths([(0, 0)]), inserted: paths([(1, 1)])))
    }

    func testRowsMovingIntoAMovingSectionForceItsDeleteAndInsert() {
        // Section 2 moves and gains row 1 from section 1: no row may move into a moving section.
        let old = sections([(1, [1, 2]), (2, [3]), (3, [4])])
        let new = sections([(3, [4, 5]), (2, [3, 1]), (1, [2])])
        diffAndJudge(old, new)
    }

    func testDuplicateSectionIdentitiesPairInOrder() {
        let result = diffAndJudge(sections([(1, [1]), (1, [2])]), sections([(1, [1])]))
        XCTAssertEqual(result.sections, SectionChanges(deleted: [1]))
    }

    func testEmptySectionedCollections() {
        XCTAssert(diffAndJudge([TestSection](), []).isEmpty)
        XCTAssertEqual(diffAndJudge([], sections([(1, [1])])).sections, SectionChanges(inserted: [0]))
        XCTAssertEqual(diffAndJudge(sections([(1, [1])]), []).sections, SectionChanges(deleted: [0]))
        XCTAssertEqual(diffAndJudge(sections([(1, [])]), sections([(1, [])])), SectionedBatch(sections: .init(), rows: .init(), oldCounts: [0], newCounts: [0]))
    }

    func testNoMovesOptionReplacesSectionAndRowMoves() {
        let options = DiffOptions(allowsMoves: false)
        let result = diffAndJudge(sections([(1, [1]), (2, [2, 3])]), sections([(2, [3, 2]), (1, [1])]), options: options)
        XCTAssertEqual(result.sections.moved, [])
        XCTAssertEqual(result.rows.moved, [])
    }
}
