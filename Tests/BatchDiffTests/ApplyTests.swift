import BatchDiff
import XCTest

/// `apply` is public: a batch that does not fit the collection is an error, never a crash.
final class ApplyTests: XCTestCase {
    private let old = sections([(1, [1, 2, 3]), (2, [4, 5])])

    private func assertRejected(_ batch: SectionedBatch, values: BatchValues<Header, Row> = BatchValues(), _ message: String, line: UInt = #line) {
        XCTAssertThrowsError(try batch.apply(to: old, values: values), message, line: line) { error in
            XCTAssertFalse("\(error)".isEmpty, line: line)
        }
    }

    private func batch(sections: SectionChanges = SectionChanges(), rows: RowChanges<RowPath>, newCounts: [Int]) -> SectionedBatch {
        SectionedBatch(sections: sections, rows: rows, oldCounts: [3, 2], newCounts: newCounts)
    }

    func testBatchesThatDoNotFitAreRejected() {
        assertRejected(SectionedBatch(sections: .init(), rows: .init(), oldCounts: [3, 3], newCounts: [3, 3]), "counts.old differs from the collection")
        assertRejected(batch(rows: RowChanges(deleted: paths([(0, 3)])), newCounts: [2, 2]), "delete past the end of a section")
        assertRejected(batch(rows: RowChanges(deleted: paths([(5, 0)])), newCounts: [2, 2]), "delete in a section that does not exist")
        assertRejected(batch(rows: RowChanges(deleted: paths([(0, 0), (0, 0)])), newCounts: [1, 2]), "the same row deleted twice")
        assertRejected(batch(rows: RowChanges(deleted: paths([(0, 0)]), moved: [Move(from: RowPath(section: 0, row: 0), to: RowPath(section: 1, row: 0))]), newCounts: [2, 3]),
                       "a row deleted and moved")
        assertRejected(batch(rows: RowChanges(inserted: paths([(0, 1)])), newCounts: [3, 2]), "counts that do not balance")
        assertRejected(batch(rows: RowChanges(inserted: paths([(0, 0)])), newCounts: [4, 2]), "values not aligned with the inserts")
        assertRejected(batch(sections: SectionChanges(deleted: [0]), rows: RowChanges(deleted: paths([(0, 1)])), newCounts: [2]),
                       "a row operation inside a deleted section")
        assertRejected(batch(rows: RowChanges(reloaded: paths([(0, 0)])), newCounts: [3, 2]),
                       values: BatchValues(reloadedRows: [Row(id: 99)]), "a reload that changes the row's identity")
        // A reload names a row that stays where it is.
        for (reloaded, message) in [((0, 3), "past the end of its section"), ((0, -1), "before the start of its section"), ((5, 0), "in no section")] {
            assertRejected(batch(rows: RowChanges(reloaded: paths([reloaded])), newCounts: [3, 2]),
                           values: BatchValues(reloadedRows: [Row(id: 1)]), "a reload \(message)")
        }
        assertRejected(batch(rows: RowChanges(deleted: paths([(0, 0)]), reloaded: paths([(0, 0)])), newCounts: [2, 2]),
                       values: BatchValues(reloadedRows: [Row(id: 1)]), "a reload of a deleted row")
        assertRejected(batch(rows: RowChanges(reloaded: paths([(0, 0)]), moved: [Move(from: RowPath(section: 0, row: 0), to: RowPath(section: 1, row: 0))]),
                             newCounts: [2, 3]), values: BatchValues(reloadedRows: [Row(id: 1)]), "a reload of a moved row")
    }

    /// Counts come with a batch, a damaged answer's too: a negative one, or one far past what
    /// the changes can balance, is an error before any room is made by it (both trapped).
    func testDamagedCountsAreRejectedBeforeRoomIsMadeByThem() {
        assertRejected(SectionedBatch(sections: .init(), rows: .init(), oldCounts: [3, 2], newCounts: [-1, 2]), "a negative count")
        assertRejected(SectionedBatch(sections: .init(), rows: .init(), oldCounts: [3, 2], newCounts: [Int.max, 2]), "a count past any balance")
        assertRejected(SectionedBatch(sections: .init(), rows: .init(), oldCounts: [3, 2], newCounts: [3, Int.max - 1]), "another, near overflow")
        let huge = SectionedBatch(sections: SectionChanges(deleted: [0], inserted: [0]), rows: .init(), oldCounts: [Int.max], newCounts: [Int.max])
        XCTAssertThrowsError(try huge.steps(), "counts past what a batch holds, balanced, with no collection to check them against")
    }

    func testAValidBatchApplies() throws {
        let batch = batch(rows: RowChanges(deleted: paths([(0, 0)]), inserted: paths([(1, 1)]), moved: [Move(from: RowPath(section: 1, row: 0), to: RowPath(section: 0, row: 2))]),
                          newCounts: [3, 2])
        let applied = try batch.apply(to: old, values: BatchValues(insertedRows: [Row(id: 6)]))
        XCTAssertEqual(applied, sections([(1, [2, 3, 4]), (2, [5, 6])]))
    }
}

/// Values are taken only from a collection the batch leads to.
final class BatchValuesTests: XCTestCase {
    func testValuesNeedTheNewCollectionTheBatchLeadsTo() throws {
        let old = sections([(1, [1, 2])])
        let new = sections([(1, [2, 3])])
        let result = batch(from: old, to: new)
        XCTAssertEqual(try result.values(from: new).insertedRows, [Row(id: 3)])
        XCTAssertThrowsError(try result.values(from: sections([(1, [2])])), "a collection of other counts")
        let negative = SectionedBatch(sections: SectionChanges(moved: [Move(from: -1, to: 0)]), rows: RowChanges(), oldCounts: [2], newCounts: [2])
        XCTAssertThrowsError(try negative.apply(to: old, values: BatchValues()), "a section moved from -1")
    }

    /// A deleted section's old count is never room made: values taken for a batch whose
    /// deleted section claims 2^31 - 1 rows (the old counts are not the collection's here);
    /// a count past that is an error.
    func testADeletedSectionsCountMakesNoRoom() throws {
        let new = sections([(9, [1, 2])])
        let damaged = SectionedBatch(sections: SectionChanges(deleted: [0], inserted: [0]), rows: RowChanges(), oldCounts: [Int(Int32.max)], newCounts: [2])
        XCTAssertEqual(try damaged.values(from: new).insertedSections, new)
        let past = SectionedBatch(sections: SectionChanges(deleted: [0], inserted: [0]), rows: RowChanges(), oldCounts: [Int.max], newCounts: [2])
        XCTAssertThrowsError(try past.values(from: new))
        let negative = SectionedBatch(sections: SectionChanges(deleted: [0], inserted: [0]), rows: RowChanges(), oldCounts: [-5], newCounts: [2])
        XCTAssertThrowsError(try negative.values(from: new))
    }

    /// A batch naming sections the new collection does not have (a client decoding a
    /// damaged answer) is an error, from sections or from flat rows, never a trap.
    func testValuesOfSectionsOutsideTheNewCollectionAreAnError() {
        let new = sections([(1, [2, 3])])
        let flat = FlatCollection(headers: new.map(\.header), items: new.flatMap(\.items), rowCounts: new.map(\.items.count))
        let inserted = SectionedBatch(sections: SectionChanges(inserted: [3]), rows: RowChanges(), oldCounts: [], newCounts: [2])
        let updated = SectionedBatch(sections: SectionChanges(updated: [5]), rows: RowChanges(), oldCounts: [2], newCounts: [2])
        for batch in [inserted, updated] {
            XCTAssertThrowsError(try batch.values(from: new), "\(batch.sections)")
            XCTAssertThrowsError(try batch.values(from: flat), "\(batch.sections)")
        }
    }
}
