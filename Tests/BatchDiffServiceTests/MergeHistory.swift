import Foundation
import TestSupport

/// A list feed's random history for `values=merge`: rows of ten members whose versions
/// change members, add, remove and nest them, set them to null, and turn rows into scalars
/// that keep their identity; between versions rows are changed, removed, added and swapped.
enum MergeHistory {
    /// The first version: 40 rows.
    static func first(using random: inout SplitMix64) -> [Any] {
        (0..<40).map { row($0, step: 0, random: &random) }
    }

    /// `rows` taken to version `step`: one row in ten changed, four replaced, one removed,
    /// one added, two swapped.
    static func advance(_ rows: inout [Any], step: Int, using random: inout SplitMix64) {
        for _ in 0..<4 { let index = Int.random(in: 0..<rows.count, using: &random); rows[index] = row(index + 100 * step, step: step, random: &random) }
        for index in rows.indices where Int.random(in: 0..<10, using: &random) == 0 {
            rows[index] = row(Int(((rows[index] as? [String: Any])?["id"] as? String ?? "r0").dropFirst()) ?? 0, step: step, random: &random)
        }
        rows.remove(at: Int.random(in: 0..<rows.count, using: &random))
        rows.insert(row(1000 + step, step: step, random: &random), at: Int.random(in: 0...rows.count, using: &random))
        rows.swapAt(Int.random(in: 0..<rows.count, using: &random), Int.random(in: 0..<rows.count, using: &random))
    }

    /// A row of ten members and sometimes a nested object; `step` changes some of them.
    private static func row(_ id: Int, step: Int, random: inout SplitMix64) -> Any {
        if step > 0, Int.random(in: 0..<40, using: &random) == 0 { return "r\(id)" }  // a scalar with the row's identity
        var row: [String: Any] = ["id": "r\(id)"]
        for member in 0..<9 { row["m\(member)"] = "value \(member) of \(id)" }
        if Int.random(in: 0..<3, using: &random) == 0 { row["m\(Int.random(in: 0..<9, using: &random))"] = step }
        switch Int.random(in: 0..<12, using: &random) {
        case 0: row["m8"] = NSNull()  // a member set to null: a whole item
        case 1: row["m7"] = nil  // a member removed
        case 2: row["nested"] = ["x": step, "y": ["deep": step % 3]]
        case 3: row["extra"] = [1, NSNull(), step]
        default: break
        }
        return row
    }
}
