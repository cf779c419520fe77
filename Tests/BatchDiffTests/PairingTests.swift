import TestSupport
@testable import BatchDiff
import XCTest

/// The pairing against its rule, computed the plain way: the k-th old element of an
/// identity pairs with the k-th new one. String identities take the fast hash and are read
/// where they lie; equal strings of different bytes (precomposed and decomposed) must pair.
final class PairingTests: XCTestCase {
    /// Identities from a small pool, so repeats are common: ASCII, non-ASCII, and a
    /// canonically equivalent spelling of each non-ASCII one.
    private static let pool = ["a", "b", "row-17", "K", "\u{212A}", "caf\u{E9}", "cafe\u{301}", "\u{1F600}", "", "0123456789abcdef0123"]

    /// An element that is its name.
    private struct Name: Diffable {
        let identity: String
        init(_ identity: String) { self.identity = identity }
        func isContentEqual(to other: Name) -> Bool { true }
    }

    private func randomIdentities(_ rng: inout SplitMix64, maxCount: Int) -> [String] {
        (0..<Int.random(in: 0...maxCount, using: &rng)).map { _ in Self.pool.randomElement(using: &rng)! }
    }

    /// The pairing the rule gives for `old[oldRange]` and `new[newRange]`, after the pairs
    /// `given` (which the rule leaves as they are): old to new and new to old, -1 unpaired.
    private func expectedPairing(
        _ old: [String], _ oldRange: Range<Int>, _ new: [String], _ newRange: Range<Int>, given: [(old: Int, new: Int)] = []
    ) -> (oldToNew: [Int32], newToOld: [Int32]) {
        var oldToNew = [Int32](repeating: -1, count: old.count)
        var newToOld = [Int32](repeating: -1, count: new.count)
        for pair in given { (oldToNew[pair.old], newToOld[pair.new]) = (Int32(pair.new), Int32(pair.old)) }
        var unpairedOld: [String: [Int]] = [:]  // String's == and hashing are canonical, as the rule is
        for index in oldRange where oldToNew[index] < 0 { unpairedOld[old[index], default: []].append(index) }
        for index in newRange where newToOld[index] < 0 {
            guard var waiting = unpairedOld[new[index]], !waiting.isEmpty else { continue }
            let partner = waiting.removeFirst()
            (oldToNew[partner], newToOld[index]) = (Int32(index), Int32(partner))
            unpairedOld[new[index]] = waiting
        }
        return (oldToNew, newToOld)
    }

    /// Checks `pairing` against `expected`, both ways (any negative entry is unpaired).
    private func assertPairing(_ pairing: Pairing, _ expected: (oldToNew: [Int32], newToOld: [Int32]), _ message: @autoclosure () -> String) {
        XCTAssertEqual(pairing.oldToNew.map { max($0, -1) }, expected.oldToNew, message())
        XCTAssertEqual(pairing.newToOld.map { max($0, -1) }, expected.newToOld, message())
    }

    func testRandomStringListsPairInOrderOfAppearance() {
        var rng = SplitMix64(state: 0x9A1E_57E5)
        for round in 0..<6000 {
            let old = randomIdentities(&rng, maxCount: 30)
            var new = randomIdentities(&rng, maxCount: 30)
            if round % 2 == 0 {
                // A few edits in the old list: a common front and back, repeats across them.
                new = old
                for _ in 0..<Int.random(in: 0...3, using: &rng) {
                    let at = Int.random(in: 0...new.count, using: &rng)
                    if Bool.random(using: &rng) || at == new.count {
                        new.insert(Self.pool.randomElement(using: &rng)!, at: at)
                    } else {
                        new.remove(at: at)
                    }
                }
            }
            let oldRange = round % 4 < 2 ? 0..<old.count : Int.random(in: 0...old.count, using: &rng)..<old.count
            let newRange = round % 4 < 2 ? 0..<new.count : 0..<Int.random(in: 0...new.count, using: &rng)
            var pairing = Pairing(oldCount: old.count, newCount: new.count)
            // Some rounds pair a few elements before: the pairing leaves them as they are.
            var given: [(old: Int, new: Int)] = []
            if round % 3 == 2, !old.isEmpty, !new.isEmpty {
                for _ in 0..<Int.random(in: 1...3, using: &rng) {
                    let pair = (old: Int.random(in: old.indices, using: &rng), new: Int.random(in: new.indices, using: &rng))
                    guard !given.contains(where: { $0.old == pair.old || $0.new == pair.new }) else { continue }
                    given.append(pair)
                    pairing.pair(old: pair.old, new: pair.new)
                }
            }
            let (oldNames, newNames) = (old.map(Name.init), new.map(Name.init))
            pairing.pair(old: oldNames, oldRange, new: newNames, newRange)
            assertPairing(pairing, expectedPairing(old, oldRange, new, newRange, given: given), "\(old)[\(oldRange)] -> \(new)[\(newRange)] after \(given)")
            // An unpaired element keeps its hash, if it keeps one, as pairing the rest again reads it.
            for (entries, names) in [(pairing.oldToNew, oldNames), (pairing.newToOld, newNames)] {
                for (index, entry) in entries.enumerated() {
                    guard let kept = Pairing.keptHash(in: entry) else { continue }
                    XCTAssertEqual(kept, Pairing.keptBits(of: names[index].identityHash))
                }
            }
        }
    }

    /// Old identities that never repeat (runs after a pair are then paired without the
    /// table), new ones that do: copies of old ones inserted, runs moved, some removed.
    func testUniqueOldIdentitiesPairInOrderOfAppearance() {
        var rng = SplitMix64(state: 0x0111_0E57)
        for _ in 0..<4000 {
            let old = (0..<Int.random(in: 0...40, using: &rng)).map { "row-\($0)" }
            var new = old
            for _ in 0..<Int.random(in: 0...4, using: &rng) where !new.isEmpty {
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: new.insert(new.randomElement(using: &rng)!, at: Int.random(in: 0...new.count, using: &rng))
                case 1: new.remove(at: Int.random(in: new.indices, using: &rng))
                case 2:
                    let start = Int.random(in: new.indices, using: &rng)
                    let run = Array(new[start..<min(new.count, start + Int.random(in: 1...8, using: &rng))])
                    new.removeSubrange(start..<start + run.count)
                    new.insert(contentsOf: run, at: Int.random(in: 0...new.count, using: &rng))
                default: new.insert("new-\(Int.random(in: 0..<5, using: &rng))", at: Int.random(in: 0...new.count, using: &rng))
                }
            }
            var pairing = Pairing(oldCount: old.count, newCount: new.count)
            pairing.pair(old: old.map(Name.init), 0..<old.count, new: new.map(Name.init), 0..<new.count)
            assertPairing(pairing, expectedPairing(old, 0..<old.count, new, 0..<new.count), "\(old) -> \(new)")
        }
    }

    /// Rows named by strings, diffed as sections: the same batch as the same rows numbered
    /// (rows read in place, the rows left over paired across sections). Some numbers have two
    /// spellings, equal as strings, drawn at random for each row.
    func testStringRowsGiveTheBatchOfNumberedRows() {
        struct NamedRow: Diffable, Equatable {
            let name: String
            let content: Int
            var identity: String { name }
        }
        let spellings = [["a"], ["b"], ["row-17"], ["K", "\u{212A}"], ["caf\u{E9}", "cafe\u{301}"], ["\u{1F600}"], [""], ["0123456789abcdef0123"]]
        var rng = SplitMix64(state: 0x5EC7_57E5)
        func named(_ sections: [TestSection]) -> [Section<Header, NamedRow>] {
            sections.map { section in
                Section(header: section.header, items: section.items.map { NamedRow(name: spellings[$0.id].randomElement(using: &rng)!, content: $0.content) })
            }
        }
        for round in 0..<3000 {
            let row = { (rng: inout SplitMix64) in Row(id: Int.random(in: spellings.indices, using: &rng), content: Int.random(in: 0..<3, using: &rng)) }
            let old = (0..<Int.random(in: 0...4, using: &rng)).map { section in
                TestSection(header: Header(id: section), items: (0..<Int.random(in: 0...12, using: &rng)).map { _ in row(&rng) })
            }
            // Sections mostly stay in place, so rows left over pair across them.
            var new = (round % 3 == 0 ? old.shuffled(using: &rng) : old).map { section in
                var items = section.items.filter { _ in Int.random(in: 0..<4, using: &rng) > 0 }
                for _ in 0..<Int.random(in: 0...3, using: &rng) { items.insert(row(&rng), at: Int.random(in: 0...items.count, using: &rng)) }
                return TestSection(header: section.header, items: items)
            }
            for _ in 0..<Int.random(in: 0...3, using: &rng) where new.count > 1 {
                let from = Int.random(in: new.indices, using: &rng)
                guard let moved = new[from].items.popLast() else { continue }
                let to = Int.random(in: new.indices, using: &rng)
                new[to].items.insert(moved, at: Int.random(in: 0...new[to].items.count, using: &rng))
            }
            XCTAssertEqual(batch(from: named(old), to: named(new)), batch(from: old, to: new), "\(old) -> \(new)")
        }
    }
}
