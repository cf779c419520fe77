import BatchDiff
@testable import BatchDiffFeeds
import BatchDiffJSON
import TestSupport
import XCTest

/// A version's batch as stores keep it (``JSONBatch/stored``): random batches of lists and
/// of sections read back the same; damaged bytes are refused, never trusted.
final class StoredBatchTests: XCTestCase {
    private var random = SplitMix64(state: 0x57_0BA7)
    private var next = 0

    private func collection(_ text: String) throws -> JSONCollection {
        try Snapshot(text: Array(text.utf8), idKey: "id").collection
    }

    /// A random list's text: some of `pool`'s rows (shuffled, some changed) and new ones.
    private func list(from pool: [Int]) -> (text: String, ids: [Int]) {
        var ids = pool.shuffled(using: &random).filter { _ in random.below(5) > 0 }
        for _ in 0..<random.below(4) {
            next += 1
            ids.insert(1000 + next, at: random.below(ids.count + 1))
        }
        let rows = ids.map { #"{"id":\#($0),"v":\#(random.below(3))}"# }
        return ("[" + rows.joined(separator: ",") + "]", ids)
    }

    /// A random sectioned collection's text: sections of ids from `sections`, rows from `rows`.
    private func sectioned(sections: [Int], rows: [Int]) -> String {
        let chosen = sections.shuffled(using: &random).filter { _ in random.below(4) > 0 }
        var pool = rows.shuffled(using: &random)
        let texts = chosen.map { section in
            let taken = pool.prefix(random.below(4))
            pool.removeFirst(taken.count)
            let items = taken.map { #"{"id":\#($0),"v":\#(random.below(2))}"# }
            return #"{"id":\#(section),"t":\#(random.below(2)),"items":[\#(items.joined(separator: ","))]}"#
        }
        return #"{"sections":[\#(texts.joined(separator: ","))]}"#
    }

    private func assertReadsBack(_ batch: JSONBatch, file: StaticString = #filePath, line: UInt = #line) throws {
        let read = try JSONBatch(stored: batch.stored)
        switch (batch, read) {
        case (.list(let written), .list(let read)): XCTAssertEqual(read, written, file: file, line: line)
        case (.sectioned(let written), .sectioned(let read)): XCTAssertEqual(read, written, file: file, line: line)
        default: XCTFail("read back as another shape: \(read)", file: file, line: line)
        }
    }

    func testRandomBatchesReadBack() throws {
        var previous = list(from: Array(0..<20))
        for _ in 0..<300 {
            let current = list(from: previous.ids)
            try assertReadsBack(try JSONBatch(from: collection(previous.text), to: collection(current.text), options: DiffOptions()))
            previous = current
        }
        var old = sectioned(sections: Array(0..<6), rows: Array(0..<20))
        for _ in 0..<300 {
            let new = sectioned(sections: Array(0..<8), rows: Array(0..<24))
            try assertReadsBack(try JSONBatch(from: collection(old), to: collection(new), options: DiffOptions()))
            old = new
        }
    }

    func testDamagedBytesAreRefused() throws {
        let list = try JSONBatch(from: collection(#"[{"id":1},{"id":2},{"id":3}]"#), to: collection(#"[{"id":3},{"id":1,"v":1},{"id":4}]"#), options: DiffOptions())
        let sections = try JSONBatch(
            from: collection(#"{"sections":[{"id":1,"items":[{"id":1}]},{"id":2,"items":[]}]}"#),
            to: collection(#"{"sections":[{"id":2,"items":[{"id":1}]},{"id":3,"items":[{"id":5}]}]}"#), options: DiffOptions()
        )
        for batch in [list, sections] {
            let bytes = batch.stored
            for cut in 0..<bytes.count {
                XCTAssertThrowsError(try JSONBatch(stored: Array(bytes[..<cut])), "cut at \(cut) of \(bytes)")
            }
            XCTAssertThrowsError(try JSONBatch(stored: bytes + [0]), "a byte after the end")
            XCTAssertThrowsError(try JSONBatch(stored: [2] + bytes.dropFirst()), "an unknown format")
        }
        // A list batch deleting row 9 of three: [format, list, old 3, new 3, deleted [9], ...].
        XCTAssertThrowsError(try JSONBatch(stored: [1, 0, 3, 3, 1, 9, 0, 0, 0]))
        XCTAssertNoThrow(try JSONBatch(stored: [1, 0, 3, 3, 1, 2, 0, 0, 0]))
        // A list claiming more elements than there are bytes.
        XCTAssertThrowsError(try JSONBatch(stored: [1, 0, 3, 3, 0x80, 0x80, 0x04]))
    }
}
