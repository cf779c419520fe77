import TestSupport
import BatchDiff
import XCTest

/// Thousands of random pairs of collections, every batch judged by `apply` and the rule checker.
final class PropertyTests: XCTestCase {
    /// A random list drawn from a small pool of identities, so repeats are common.
    private func randomRows(_ rng: inout SplitMix64, maxCount: Int, pool: Int) -> [Row] {
        (0..<Int.random(in: 0...maxCount, using: &rng)).map { _ in
            Row(id: Int.random(in: 0..<pool, using: &rng), content: Int.random(in: 0..<4, using: &rng) == 0 ? 1 : 0)
        }
    }

    /// `rows` after random deletes, inserts, moves and content changes.
    private func mutated(_ rows: [Row], _ rng: inout SplitMix64, pool: Int) -> [Row] {
        var result = rows
        for _ in 0..<Int.random(in: 0...6, using: &rng) {
            switch Int.random(in: 0..<4, using: &rng) {
            case 0 where !result.isEmpty: result.remove(at: Int.random(in: result.indices, using: &rng))
            case 1: result.insert(Row(id: Int.random(in: 0..<pool, using: &rng)), at: Int.random(in: 0...result.count, using: &rng))
            case 2 where !result.isEmpty:
                let row = result.remove(at: Int.random(in: result.indices, using: &rng))
                result.insert(row, at: Int.random(in: 0...result.count, using: &rng))
            case 3 where !result.isEmpty: result[Int.random(in: result.indices, using: &rng)].content += 1
            default: break
            }
        }
        return result
    }

    func testRandomListsThousandsOfCases() throws {
        var rng = SplitMix64(state: 0xBA7C_D1FF)
        for round in 0..<6000 {
            let pool = [3, 10, 40][round % 3]
            let old = randomRows(&rng, maxCount: 24, pool: pool)
            let new = round % 5 == 0 ? randomRows(&rng, maxCount: 24, pool: pool) : mutated(old, &rng, pool: pool)
            let result = diffAndJudge(old, new, options: DiffOptions(allowsMoves: round % 7 != 0))
            checkOrigins(try result.unchangedRowOrigins(), of: result.sectioned, old: old, new: new)
        }
    }

    /// Each row the origins name is the new row, same identity and content, each old row named
    /// once; every row is named but those inserted, reloaded or in inserted sections.
    private func checkOrigins(_ origins: [Int?], of batch: SectionedBatch, old: [Row], new: [Row], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(origins.count, new.count, file: file, line: line)
        for (row, origin) in origins.enumerated() {
            if let origin { XCTAssertEqual(old[origin], new[row], "new row \(row)", file: file, line: line) }
        }
        let named = origins.compactMap { $0 }
        XCTAssertEqual(Set(named).count, named.count, "an old row named twice", file: file, line: line)
        let insertedSectionRows = batch.sections.inserted.reduce(0) { $0 + batch.newCounts[$1] }
        XCTAssertEqual(named.count, new.count - batch.rows.inserted.count - batch.rows.reloaded.count - insertedSectionRows, file: file, line: line)
    }

    func testRandomSectionsThousandsOfCases() throws {
        var rng = SplitMix64(state: 0x5EC7_1025)
        for round in 0..<6000 {
            let sectionPool = [2, 5, 9][round % 3]
            let rowPool = [4, 15, 60][(round / 3) % 3]
            let old = (0..<Int.random(in: 0...5, using: &rng)).map { _ in
                TestSection(header: Header(id: Int.random(in: 0..<sectionPool, using: &rng)),
                            items: randomRows(&rng, maxCount: 8, pool: rowPool))
            }
            var new = old.map { TestSection(header: $0.header, items: mutated($0.items, &rng, pool: rowPool)) }
            for _ in 0..<Int.random(in: 0...3, using: &rng) {
                switch Int.random(in: 0..<5, using: &rng) {
                case 0 where !new.isEmpty: new.remove(at: Int.random(in: new.indices, using: &rng))
                case 1:
                    let section = TestSection(header: Header(id: Int.random(in: 0..<sectionPool, using: &rng)),
                                              items: randomRows(&rng, maxCount: 6, pool: rowPool))
                    new.insert(section, at: Int.random(in: 0...new.count, using: &rng))
                case 2 where !new.isEmpty:
                    let section = new.remove(at: Int.random(in: new.indices, using: &rng))
                    new.insert(section, at: Int.random(in: 0...new.count, using: &rng))
                case 3 where !new.isEmpty: new[Int.random(in: new.indices, using: &rng)].header.title += 1
                case 4 where new.count > 1:  // a row travels to another section
                    let from = Int.random(in: new.indices, using: &rng)
                    let to = Int.random(in: new.indices, using: &rng)
                    if let row = new[from].items.popLast() {
                        new[to].items.insert(row, at: Int.random(in: 0...new[to].items.count, using: &rng))
                    }
                default: break
                }
            }
            let options = DiffOptions(allowsMoves: round % 7 != 0)
            let result = diffAndJudge(old, new, options: options)
            checkOrigins(try result.unchangedRowOrigins(), of: result, old: old.flatMap(\.items), new: new.flatMap(\.items))
            // The same collections with their rows kept flat: the same batch, the same values.
            func flat(_ sections: [TestSection]) -> FlatCollection<Header, [Row]> {
                FlatCollection(headers: sections.map(\.header), items: sections.flatMap(\.items), rowCounts: sections.map(\.items.count))
            }
            XCTAssertEqual(batch(from: flat(old), to: flat(new), options: options), result)
            let values = try result.values(from: new)
            let flatValues = try result.values(from: flat(new))
            XCTAssertEqual(flatValues.insertedRows, values.insertedRows)
            XCTAssertEqual(flatValues.reloadedRows, values.reloadedRows)
            XCTAssertEqual(flatValues.insertedHeaders, values.insertedSections.map(\.header))
            XCTAssertEqual(flatValues.updatedHeaders.map(\.id), values.updatedHeaders.map(\.id))
        }
    }
}
