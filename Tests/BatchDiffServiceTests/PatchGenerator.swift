import Foundation
import TestSupport

/// Random `PATCH` ops (docs/feeds.md §3) that a collection accepts, and the model of what
/// they make of it: every op and position kind, anchors at both ends, rows and sections
/// named more than once in one patch. Identities never repeat (the ops name them).
struct PatchGenerator {
    typealias Object = [String: Any]

    private var random: SplitMix64
    private var nextID = 0

    init(seed: UInt64) { random = SplitMix64(state: seed) }

    private mutating func freshItem() -> Object {
        nextID += 1
        return ["id": nextID, "v": random.below(3)]
    }

    /// A position member among `identities` (the neighbours, the moving one left out), and
    /// where it puts an element among them: start, end, before or after any one.
    private mutating func position(among identities: [Any], optional: Bool) -> (member: (String, Any)?, index: Int) {
        switch random.below(optional ? 5 : 4) {
        case 0: return (("at", "start"), 0)
        case 1: return (("at", "end"), identities.count)
        case 2 where !identities.isEmpty:
            let anchor = random.below(identities.count)
            return (("before", identities[anchor]), anchor)
        case 3 where !identities.isEmpty:
            let anchor = random.below(identities.count)
            return (("after", identities[anchor]), anchor + 1)
        default: return (optional ? nil : ("at", "end"), identities.count)
        }
    }

    /// The op `name` (`move` or `moveSection`) that puts `element` at a random position among
    /// `elements`, where it is put.
    private mutating func move(_ name: String, _ element: Object, into elements: inout [Object]) -> Object {
        let (member, index) = position(among: elements.map { $0["id"]! }, optional: false)
        var op: Object = ["op": name, "id": element["id"]!]
        op[member!.0] = member!.1
        elements.insert(element, at: index)
        return op
    }

    /// 1 to 6 ops on the list `rows`, and the list they lead to.
    mutating func listPatch(of rows: [Object]) -> (ops: [Object], result: [Object]) {
        var rows = rows
        var ops: [Object] = []
        for _ in 0..<(1 + random.below(6)) {
            let kind = rows.isEmpty ? 1 : rows.count > 30 && random.chance(50) ? 2 : random.below(6)
            switch kind {
            case 0, 1:  // upsert: an existing row (new content, maybe moved) or a new one
                let existing = kind == 0 ? random.below(rows.count) : nil
                var item = existing.map { rows[$0] } ?? freshItem()
                if existing != nil { item["v"] = random.below(4) }
                if let existing { rows.remove(at: existing) }
                let (member, index) = position(among: rows.map { $0["id"]! }, optional: true)
                var op: Object = ["op": "upsert", "item": item]
                if let member { op[member.0] = member.1 }
                rows.insert(item, at: member == nil && existing != nil ? existing! : index)
                ops.append(op)
            case 2:
                let row = rows.remove(at: random.below(rows.count))
                ops.append(["op": "remove", "id": row["id"]!])
            case 5:  // merge: members set, removed with null, a nested object merged
                let at = random.below(rows.count)
                var patch: Object = ["v": random.below(4)]
                switch random.below(3) {
                case 0: patch["w"] = NSNull()
                case 1: patch["w"] = ["a": random.below(3), "b": NSNull()]
                default: patch["w"] = ["b": random.below(3)]
                }
                if random.chance(30) { patch["id"] = rows[at]["id"]! }
                rows[at] = Self.merged(rows[at], patch) as! Object
                ops.append(["op": "merge", "id": rows[at]["id"]!, "patch": patch])
            default:
                let row = rows.remove(at: random.below(rows.count))
                ops.append(move("move", row, into: &rows))
            }
        }
        return (ops, rows)
    }

    /// `target` with the merge patch `patch` applied (RFC 7396 §2), the model of `merge`.
    static func merged(_ target: Any?, _ patch: Any) -> Any {
        guard let patch = patch as? Object else { return patch }
        var result = target as? Object ?? [:]
        for (key, value) in patch {
            result[key] = value is NSNull ? nil : merged(result[key], value)
        }
        return result
    }

    /// 1 to 6 ops on the sections `sections` (each `{"id", "title", "items"}`), and the
    /// sections they lead to.
    mutating func sectionedPatch(of sections: [Object]) -> (ops: [Object], result: [Object]) {
        var sections = sections
        var ops: [Object] = []
        func items(_ section: Int) -> [Object] { sections[section]["items"] as! [Object] }
        for _ in 0..<(1 + random.below(6)) {
            let kind = sections.isEmpty ? 0 : sections.count > 8 && random.chance(50) ? 2 : random.below(10)
            switch kind {
            case 0:  // a new section, maybe with rows
                nextID += 1
                let rows = (0..<random.below(3)).map { _ in freshItem() }
                let section: Object = ["id": "s\(nextID)", "title": "Section \(nextID)", "items": rows]
                let (member, index) = position(among: sections.map { $0["id"]! }, optional: true)
                var op: Object = ["op": "upsertSection", "item": rows.isEmpty && random.chance(50) ? section.filter { $0.key != "items" } : section]
                if let member { op[member.0] = member.1 }
                sections.insert(section, at: index)
                ops.append(op)
            case 1:  // a header change, maybe moved
                let at = random.below(sections.count)
                var section = sections.remove(at: at)
                section["title"] = "Title \(random.below(100))"
                let (member, index) = position(among: sections.map { $0["id"]! }, optional: true)
                var op: Object = ["op": "upsertSection", "item": section.filter { $0.key != "items" }]
                if let member { op[member.0] = member.1 }
                sections.insert(section, at: member == nil ? at : index)
                ops.append(op)
            case 2 where random.chance(50) || sections.count > 8:
                let section = sections.remove(at: random.below(sections.count))
                ops.append(["op": "removeSection", "id": section["id"]!])
            case 3:
                let section = sections.remove(at: random.below(sections.count))
                ops.append(move("moveSection", section, into: &sections))
            default:
                let section = random.below(sections.count)
                var rows = items(section)
                var (listOps, result) = listPatch(of: rows)
                rows = result
                // A move may take a row from another section: where it goes is named.
                if random.chance(30), let from = (0..<sections.count).filter({ $0 != section && !items($0).isEmpty }).first {
                    var source = items(from)
                    let row = source.remove(at: random.below(source.count))
                    sections[from]["items"] = source
                    listOps.append(move("move", row, into: &rows))
                }
                sections[section]["items"] = rows
                ops += listOps.map { op in op.merging(["section": sections[section]["id"]!]) { $1 } }
            }
        }
        return (ops, sections)
    }
}
