import BatchDiff
import Foundation

/// DifferenceKit's published list workloads (its Benchmark/): UUID strings; a range
/// deleted, a range inserted, a prefix shuffled.
struct ListWorkload {
    let name: String
    let source: [String]
    let target: [String]

    init(count: Int, deleted: Range<Int>, inserted: Range<Int>, shuffled: Range<Int>, using rng: inout some RandomNumberGenerator) {
        name = "list \(count) (-\(deleted.count) +\(inserted.count) ~\(shuffled.count))"
        source = (0..<count).map { _ in UUID().uuidString }
        var target = source
        target.removeSubrange(deleted)
        target.insert(contentsOf: inserted.map { _ in UUID().uuidString }, at: inserted.lowerBound)
        target[shuffled].shuffle(using: &rng)
        self.target = target
    }
}

/// A sectioned workload: sections of rows (UUID identities with a content string), with
/// rows deleted, inserted, moved within and across sections and changed, and sections
/// deleted, inserted and moved.
struct SectionedWorkload {
    typealias Rows = [(id: String, content: String)]
    let name: String
    let source: [(id: String, rows: Rows)]
    let target: [(id: String, rows: Rows)]

    init(sections: Int, rows: Int, using rng: inout some RandomNumberGenerator) {
        name = "sectioned \(sections)x\(rows) (rows -10% +10% ~2% *5%, sections -5 +5 ~3)"
        func freshRows(_ count: Int) -> Rows { (0..<count).map { _ in let id = UUID().uuidString; return (id, id) } }
        source = (0..<sections).map { _ in (UUID().uuidString, freshRows(rows)) }
        var target = source
        let total = sections * rows
        for _ in 0..<(total / 10) {  // 10% of rows deleted
            let s = Int.random(in: target.indices, using: &rng)
            if !target[s].rows.isEmpty { target[s].rows.remove(at: Int.random(in: target[s].rows.indices, using: &rng)) }
        }
        for _ in 0..<(total / 10) {  // 10% inserted
            let s = Int.random(in: target.indices, using: &rng)
            target[s].rows.insert(freshRows(1)[0], at: Int.random(in: 0...target[s].rows.count, using: &rng))
        }
        for _ in 0..<(total / 50) {  // 2% moved, within and across sections
            let from = Int.random(in: target.indices, using: &rng)
            let to = Bool.random(using: &rng) ? from : Int.random(in: target.indices, using: &rng)
            guard !target[from].rows.isEmpty else { continue }
            let row = target[from].rows.remove(at: Int.random(in: target[from].rows.indices, using: &rng))
            target[to].rows.insert(row, at: Int.random(in: 0...target[to].rows.count, using: &rng))
        }
        for _ in 0..<(total / 20) {  // 5% changed
            let s = Int.random(in: target.indices, using: &rng)
            if !target[s].rows.isEmpty { target[s].rows[Int.random(in: target[s].rows.indices, using: &rng)].content += "'" }
        }
        for _ in 0..<5 { target.remove(at: Int.random(in: target.indices, using: &rng)) }
        for _ in 0..<5 { target.insert((UUID().uuidString, freshRows(rows)), at: Int.random(in: 0...target.count, using: &rng)) }
        for _ in 0..<3 {
            let section = target.remove(at: Int.random(in: target.indices, using: &rng))
            target.insert(section, at: Int.random(in: 0...target.count, using: &rng))
        }
        self.target = target
    }
}
