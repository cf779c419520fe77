import TestSupport
import Foundation

/// A deterministic series of snapshots, each a few random edits away from the one before:
/// inserts, deletes, content changes, moves, repeated identities, items without an `id`
/// or with one that is neither a string nor a number;
/// for sectioned collections also section inserts, deletes, moves, header changes and rows
/// moving between sections.
struct SnapshotGenerator {
    private var random: SplitMix64
    private var nextID = 0

    init(seed: UInt64) { random = SplitMix64(state: seed) }

    private mutating func below(_ bound: Int) -> Int { random.below(bound) }
    private mutating func chance(_ percent: Int) -> Bool { random.chance(percent) }

    private mutating func freshItem() -> Any {
        nextID += 1
        switch below(10) {
        case 0: return "text-\(nextID)"  // no id member: the whole value is the identity
        case 1: return nextID  // a number, likewise
        case 2: return ["id": chance(50) ? NSNull() : true as Any, "v": below(3), "n": nextID] as [String: Any]  // an id that is no identity
        default: return ["id": nextID, "v": below(3), "name": "item \(nextID)"] as [String: Any]
        }
    }

    private mutating func edit(_ item: Any) -> Any {
        guard var object = item as? [String: Any] else { return item }
        if chance(70) {
            object["v"] = (object["v"] as? Int ?? 0) + 1
        } else if object["tag"] == nil {
            object["tag"] = ["x", "y"][below(2)]
        } else {
            object["tag"] = nil
        }
        return object
    }

    /// Takes a random element out of `elements` and puts it back at a random place.
    private mutating func moveOne<Element>(in elements: inout [Element]) {
        let element = elements.remove(at: below(elements.count))
        elements.insert(element, at: below(elements.count + 1))
    }

    /// A few random edits of the rows `items`; `pool` offers identities to repeat.
    private mutating func editRows(_ items: [Any], pool: [Any]) -> [Any] {
        var items = items
        for _ in 0..<(1 + below(4)) {
            switch below(6) {
            case 0 where !items.isEmpty:
                items.remove(at: below(items.count))
            case 1:
                items.insert(freshItem(), at: below(items.count + 1))
            case 2 where !items.isEmpty:
                let index = below(items.count)
                items[index] = edit(items[index])
            case 3 where items.count > 1:
                moveOne(in: &items)
            case 4 where !pool.isEmpty && chance(40):
                // A repeated identity (maybe with other content).
                var item = pool[below(pool.count)]
                if chance(50) { item = edit(item) }
                items.insert(item, at: below(items.count + 1))
            default:
                items.insert(freshItem(), at: below(items.count + 1))
            }
        }
        return items
    }

    /// The next list after `previous` (a JSON array), always different from it.
    mutating func nextList(after previous: [Any]) -> [Any] {
        if chance(5) { return previous.shuffled(using: &random) + [freshItem()] }  // now and then, a big reshuffle
        var items = editRows(previous, pool: previous)
        if items.count > 40 { items.removeFirst(items.count - 40) }
        if canonicalJSON(items) == canonicalJSON(previous) { items.append(freshItem()) }
        return items
    }

    private mutating func freshSection() -> [String: Any] {
        nextID += 1
        var section: [String: Any] = ["id": "s\(nextID)", "title": "Section \(nextID)", "items": []]
        section["items"] = (0..<below(4)).map { _ in freshItem() }
        return section
    }

    /// The next sectioned collection after `previous` (`{"sections": [...]}`), always different.
    mutating func nextSectioned(after previous: [String: Any]) -> [String: Any] {
        var sections = previous["sections"] as? [[String: Any]] ?? []
        for _ in 0..<(1 + below(3)) {
            switch below(10) {
            case 0 where !sections.isEmpty:
                sections.remove(at: below(sections.count))
            case 1:
                sections.insert(freshSection(), at: below(sections.count + 1))
            case 2 where sections.count > 1:
                moveOne(in: &sections)
            case 3 where !sections.isEmpty:
                // A header change: a new title, or a footer member coming or going.
                let index = below(sections.count)
                if chance(60) {
                    sections[index]["title"] = "Title \(below(1000))"
                } else {
                    sections[index]["footer"] = sections[index]["footer"] == nil ? "footer" : nil
                }
            case 4 where sections.count > 1:
                // A row moves to another section.
                let from = below(sections.count)
                var fromItems = sections[from]["items"] as? [Any] ?? []
                guard !fromItems.isEmpty else { break }
                let item = fromItems.remove(at: below(fromItems.count))
                sections[from]["items"] = fromItems
                let to = below(sections.count)
                var toItems = sections[to]["items"] as? [Any] ?? []
                toItems.insert(chance(30) ? edit(item) : item, at: below(toItems.count + 1))
                sections[to]["items"] = toItems
            case 5 where !sections.isEmpty && chance(20):
                // A repeated section identity.
                var copy = sections[below(sections.count)]
                copy["items"] = (0..<below(3)).map { _ in freshItem() }
                sections.insert(copy, at: below(sections.count + 1))
            default:
                guard !sections.isEmpty else {
                    sections.append(freshSection())
                    break
                }
                let index = below(sections.count)
                let items = sections[index]["items"] as? [Any] ?? []
                sections[index]["items"] = editRows(items, pool: sections.flatMap { $0["items"] as? [Any] ?? [] })
            }
        }
        if sections.count > 10 { sections.removeFirst(sections.count - 10) }
        var next: [String: Any] = ["sections": sections]
        if canonicalJSON(next) == canonicalJSON(previous) {
            sections.append(freshSection())
            next = ["sections": sections]
        }
        return next
    }
}
