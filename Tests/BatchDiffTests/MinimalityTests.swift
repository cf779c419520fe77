import BatchDiff
import TestSupport
import XCTest

/// Batches without moves keep as many rows in place as the pairing allows: sections pair by
/// identity in order of appearance (docs/batch-format.md §1.5), and a section that stays keeps
/// a longest common subsequence of its rows, by identity (repeats included); a section that
/// does not stay loses all its rows (no move), so the best batch keeps the increasing run of
/// paired sections whose rows keep the longest common subsequences.
final class MinimalityTests: XCTestCase {
    /// Partners of `new` in `old` by identity, in order of appearance (nil: unpaired).
    private func pairs<Element: Diffable>(_ old: [Element], _ new: [Element]) -> [Int?] where Element.Identity: Hashable {
        var waiting: [Element.Identity: [Int]] = [:]
        for (index, element) in old.enumerated() { waiting[element.identity, default: []].append(index) }
        return new.map { element in
            guard var queue = waiting[element.identity], !queue.isEmpty else { return nil }
            let first = queue.removeFirst()
            waiting[element.identity] = queue
            return first
        }
    }

    /// The length of a longest strictly increasing subsequence, by the quadratic recurrence.
    private func longestIncreasing(_ values: [Int]) -> Int {
        var best = [Int](repeating: 1, count: values.count)
        for index in values.indices {
            for before in 0..<index where values[before] < values[index] { best[index] = max(best[index], best[before] + 1) }
        }
        return best.max() ?? 0
    }

    /// The length of a longest common subsequence of `old` and `new` by identity, by the
    /// quadratic recurrence.
    private func longestCommon<Element: Diffable>(_ old: [Element], _ new: [Element]) -> Int {
        var previous = [Int](repeating: 0, count: new.count + 1)
        for element in old {
            var current = [0]
            for (index, other) in new.enumerated() {
                current.append(element.identity == other.identity ? previous[index] + 1 : max(previous[index + 1], current[index]))
            }
            previous = current
        }
        return previous[new.count]
    }

    /// The most rows a batch without moves can keep in place from `old` to `new` when a pair
    /// of sections that stays keeps `kept` of its rows: by default a longest common subsequence,
    /// the most it can keep.
    private func bound(_ old: [TestSection], _ new: [TestSection], kept: (([Row], [Row]) -> Int)? = nil) -> Int {
        let sectionPartners = pairs(old.map(\.header), new.map(\.header))
        // For each paired new section: its old partner, and the rows it keeps if it stays.
        let paired = new.indices.compactMap { newSection -> (old: Int, kept: Int)? in
            guard let oldSection = sectionPartners[newSection] else { return nil }
            return (oldSection, (kept ?? longestCommon)(old[oldSection].items, new[newSection].items))
        }
        // The heaviest increasing run of old partners, by the quadratic recurrence.
        var best = paired.map(\.kept)
        for index in paired.indices {
            for before in 0..<index where paired[before].old < paired[index].old {
                best[index] = max(best[index], best[before] + paired[index].kept)
            }
        }
        return best.max() ?? 0
    }

    /// Rows of `new` that a batch keeps in place: in a section neither inserted nor moved,
    /// and neither inserted nor moved themselves.
    private func keptInPlace(_ batch: SectionedBatch, _ new: [TestSection]) -> Int {
        let inserted = Set(batch.sections.inserted)
        let insertedRows = Set(batch.rows.inserted)
        var kept = 0
        for (section, content) in new.enumerated() where !inserted.contains(section) {
            kept += content.items.indices.filter { !insertedRows.contains(RowPath(section: section, row: $0)) }.count
        }
        return kept
    }

    /// Swapped sections of different sizes, and random ones: the batch keeps the bound. (The
    /// longest run of sections was kept, whatever rows it held: 3 of 300 random cases kept a
    /// row fewer than the bound. Repeated rows paired in order of appearance, not as a longest
    /// common subsequence, kept fewer in 63 of these 3,000.)
    func testWithoutMovesTheBatchKeepsTheMostRowsInPlace() {
        let swapped = (
            [TestSection(header: Header(id: 1), items: [Row(id: 1)]), TestSection(header: Header(id: 2), items: (2...9).map { Row(id: $0) })],
            [TestSection(header: Header(id: 2), items: (2...9).map { Row(id: $0) }), TestSection(header: Header(id: 1), items: [Row(id: 1)])]
        )
        var cases = [swapped]
        var rng = SplitMix64(state: 0x0DD_5EC7)
        for _ in 0..<3000 {
            let old = (0..<Int.random(in: 0...5, using: &rng)).map { _ in
                TestSection(header: Header(id: Int.random(in: 0..<6, using: &rng)),
                            items: (0..<Int.random(in: 0...6, using: &rng)).map { _ in Row(id: Int.random(in: 0..<12, using: &rng)) })
            }
            var new = old.shuffled(using: &rng)
            for index in new.indices where Bool.random(using: &rng) { new[index].items.shuffle(using: &rng) }
            if Bool.random(using: &rng), !new.isEmpty { new[0].items.append(Row(id: Int.random(in: 0..<12, using: &rng))) }
            cases.append((old, new))
        }
        for (old, new) in cases {
            let batch = diffAndJudge(old, new, options: DiffOptions(allowsMoves: false))
            XCTAssertEqual(keptInPlace(batch, new), bound(old, new), "\(old) -> \(new): \(batch)")
        }
    }

    /// The pairs of sections (old, new) that a batch without section moves keeps, by the fill
    /// rule: the old sections not deleted, in order, become the new sections not inserted.
    private func stayingSections(_ batch: SectionedBatch) -> [(old: Int, new: Int)] {
        let old = batch.oldCounts.indices.filter { !batch.sections.deleted.contains($0) }
        let new = batch.newCounts.indices.filter { !batch.sections.inserted.contains($0) }
        return Array(zip(old, new))
    }

    /// Collections whose rows repeat (issue 37 §8, RepeatedRowCases.swift): without moves,
    /// each pair of sections that stays deletes and inserts only the rows outside a longest
    /// common subsequence of its rows, and the batch keeps the bound. (Repeats paired in
    /// order of appearance crossed: `S3` of `sectioned_157_mixed`, `["0", true, 0, "é", "0",
    /// 0, true]` to `["0", true, "é", "0", 0, true]`, paired its first `0` with the new one,
    /// and deleted both `0`s and inserted one where deleting the first would do.)
    func testWithoutMovesRepeatedRowsKeepALongestCommonSubsequence() throws {
        for (name, oldJSON, newJSON) in RepeatedRowCases.all {
            let (old, new) = try testSections(old: oldJSON, new: newJSON)
            let batch = diffAndJudge(old, new, options: DiffOptions(allowsMoves: false))
            for (oldSection, newSection) in stayingSections(batch) {
                let (oldRows, newRows) = (old[oldSection].items, new[newSection].items)
                let replaced = batch.rows.deleted.count { $0.section == oldSection } + batch.rows.inserted.count { $0.section == newSection }
                XCTAssertLessThanOrEqual(
                    replaced, oldRows.count + newRows.count - 2 * longestCommon(oldRows, newRows),
                    "\(name): rows deleted and inserted from section \(oldSection) to \(newSection): \(batch)"
                )
            }
            XCTAssertEqual(keptInPlace(batch, new), bound(old, new), "\(name): \(batch)")
        }
    }

    /// Longer sections, rows drawn from a few identities: the batch keeps no fewer rows than
    /// rows paired in order of appearance would, and the bound when no identity repeats more
    /// than 8 times in an old section (more often, it pairs in order of appearance: see
    /// `Pairing.matchesPerRow`).
    func testWithoutMovesManyRepeatsKeepNoFewerRows() {
        var rng = SplitMix64(state: 0x4E9E_A75)
        var fresh = 1_000
        for round in 0..<1500 {
            let pool = [2, 3, 6, 20][round % 4]
            let old = (0..<Int.random(in: 1...3, using: &rng)).map { section in
                TestSection(header: Header(id: section), items: (0..<Int.random(in: 0...30, using: &rng)).map { _ in
                    Row(id: Int.random(in: 0..<pool, using: &rng), content: Int.random(in: 0..<2, using: &rng))
                })
            }
            var new = old.map { TestSection(header: $0.header, items: randomlyEdited($0.items, fresh: &fresh, using: &rng)) }
            for _ in 0..<Int.random(in: 0...3, using: &rng) {
                let section = Int.random(in: new.indices, using: &rng)
                new[section].items.insert(Row(id: Int.random(in: 0..<pool, using: &rng)), at: Int.random(in: 0...new[section].items.count, using: &rng))
            }
            if round % 5 == 0 { new.shuffle(using: &rng) }
            let batch = diffAndJudge(old, new, options: DiffOptions(allowsMoves: false))
            let kept = keptInPlace(batch, new)
            XCTAssertGreaterThanOrEqual(kept, bound(old, new) { self.longestIncreasing(self.pairs($0, $1).compactMap { $0 }) }, "\(old) -> \(new): \(batch)")
            let fewRepeats = old.allSatisfy { section in Dictionary(grouping: section.items, by: \.id).values.allSatisfy { $0.count <= 8 } }
            if fewRepeats {
                XCTAssertEqual(kept, bound(old, new), "\(old) -> \(new): \(batch)")
            } else {
                XCTAssertLessThanOrEqual(kept, bound(old, new), "\(old) -> \(new): \(batch)")
            }
        }
    }

    /// With moves, among the longest runs of rows that keep their order, the batch keeps the
    /// one with the most changed rows: a changed row that does not stay is deleted and
    /// inserted, an unchanged one only moves. With repeated identities a pairing by order of
    /// appearance makes changed pairs of rows the client sees unchanged (`a` with content x
    /// paired with the `a` of content y, and the reverse); 1 in about 500 cases deleted and
    /// inserted two of them where moving another row would do.
    func testWithMovesTheRowsThatMoveAreUnchangedWhereAnyCanBe() {
        var cases = [([Row(id: 1, content: 0), Row(id: 2), Row(id: 1, content: 1)], [Row(id: 1, content: 1), Row(id: 1, content: 0), Row(id: 2)])]
        var rng = SplitMix64(state: 0x0B1E_C7ED)
        for _ in 0..<3000 {
            let old = (0..<Int.random(in: 0...9, using: &rng)).map { _ in
                Row(id: Int.random(in: 0..<4, using: &rng), content: Int.random(in: 0..<2, using: &rng))
            }
            var new = old.shuffled(using: &rng)
            if Bool.random(using: &rng), !new.isEmpty { new[Int.random(in: new.indices, using: &rng)].content += 1 }
            cases.append((old, new))
        }
        for (old, new) in cases {
            let batch = diffAndJudge(old, new)
            let partners = pairs(old, new)
            // (old partner, changed) of each paired new row, in new order.
            let paired = new.indices.compactMap { index in partners[index].map { ($0, old[$0] != new[index]) } }
            // The best run: longest, then most changed rows kept (the quadratic recurrence).
            var best = paired.map { (length: 1, changed: $0.1 ? 1 : 0) }
            for index in paired.indices {
                for before in 0..<index where paired[before].0 < paired[index].0 {
                    let extended = (length: best[before].length + 1, changed: best[before].changed + (paired[index].1 ? 1 : 0))
                    if (extended.length, extended.changed) > (best[index].length, best[index].changed) { best[index] = extended }
                }
            }
            let top = best.max { ($0.length, $0.changed) < ($1.length, $1.changed) }
            let fewestReplaced = paired.filter(\.1).count - (top?.changed ?? 0)
            let replaced = batch.rows.deleted.count - (old.count - paired.count)
            XCTAssertEqual(replaced, fewestReplaced, "\(old) -> \(new): \(batch)")
        }
    }
}
