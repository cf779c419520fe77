import BatchDiff
import TestSupport

/// A row for tests: an identity and a content version.
struct Row: Diffable, Hashable, CustomStringConvertible {
    var id: Int
    var content: Int = 0
    var identity: Int { id }
    var description: String { content == 0 ? "\(id)" : "\(id)'\(content)" }
}

/// A section header for tests: an identity and a title version.
struct Header: Diffable, Hashable {
    var id: Int
    var title: Int = 0
    var identity: Int { id }
}

typealias TestSection = Section<Header, Row>

/// Sections from a compact description: `[(id, [row ids])]`.
func sections(_ description: [(Int, [Int])]) -> [TestSection] {
    description.map { TestSection(header: Header(id: $0.0), items: $0.1.map { Row(id: $0) }) }
}

func paths(_ pairs: [(Int, Int)]) -> [RowPath] { pairs.map { RowPath(section: $0.0, row: $0.1) } }

/// `old` after up to six random edits: rows removed, inserted (identities from `fresh` on),
/// moved and changed.
func randomlyEdited(_ old: [Row], fresh: inout Int, using rng: inout SplitMix64) -> [Row] {
    var new = old
    for _ in 0..<Int.random(in: 0...6, using: &rng) {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0 where !new.isEmpty: new.remove(at: Int.random(in: new.indices, using: &rng))
        case 1:
            new.insert(Row(id: fresh), at: Int.random(in: 0...new.count, using: &rng))
            fresh += 1
        case 2 where !new.isEmpty: new.insert(new.remove(at: Int.random(in: new.indices, using: &rng)), at: Int.random(in: 0...new.count, using: &rng))
        case 3 where !new.isEmpty: new[Int.random(in: new.indices, using: &rng)].content += 1
        default: break
        }
    }
    return new
}

/// `old` after up to six random edits: sections removed, inserted, moved and retitled, rows
/// inserted, moved (within a section or to another) and changed; new identities from `fresh` on.
func randomlyEdited(_ old: [TestSection], fresh: inout Int, using rng: inout SplitMix64) -> [TestSection] {
    var new = old
    for _ in 0..<Int.random(in: 0...6, using: &rng) {
        switch Int.random(in: 0..<7, using: &rng) {
        case 0 where !new.isEmpty: new.remove(at: Int.random(in: new.indices, using: &rng))
        case 1:
            new.insert(TestSection(header: Header(id: fresh), items: [Row(id: fresh + 1)]), at: Int.random(in: 0...new.count, using: &rng))
            fresh += 2
        case 2 where !new.isEmpty: new.insert(new.remove(at: Int.random(in: new.indices, using: &rng)), at: Int.random(in: 0...new.count, using: &rng))
        case 3 where !new.isEmpty: new[Int.random(in: new.indices, using: &rng)].header.title += 1
        case 4 where !new.isEmpty:
            let section = Int.random(in: new.indices, using: &rng)
            new[section].items.insert(Row(id: fresh), at: Int.random(in: 0...new[section].items.count, using: &rng))
            fresh += 1
        case 5 where !new.isEmpty:
            // A row moves, within its section or to another.
            let from = Int.random(in: new.indices, using: &rng)
            guard !new[from].items.isEmpty else { break }
            let row = new[from].items.remove(at: Int.random(in: new[from].items.indices, using: &rng))
            let to = Int.random(in: new.indices, using: &rng)
            new[to].items.insert(row, at: Int.random(in: 0...new[to].items.count, using: &rng))
        case 6 where !new.isEmpty:
            let section = Int.random(in: new.indices, using: &rng)
            if !new[section].items.isEmpty { new[section].items[Int.random(in: new[section].items.indices, using: &rng)].content += 1 }
        default: break
        }
    }
    return new
}

/// The rules ``brokenRules(_:old:new:identity:allowsMoves:)`` checks, for test sections.
func brokenRules(_ batch: SectionedBatch, old: [TestSection], new: [TestSection], allowsMoves: Bool = true) -> [String] {
    TestSupport.brokenRules(batch, old: old, new: new, identity: \.id, allowsMoves: allowsMoves)
}
