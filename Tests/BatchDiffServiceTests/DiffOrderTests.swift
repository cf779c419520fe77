import Foundation
import TestSupport
import XCTest

/// `POST /diff` with `options.orderBy` (and `sectionOrderBy`): both sides put in the order
/// before the diff (docs/batch-format.md §6), as a model of the order says (docs/feeds.md §14).
final class DiffOrderTests: ServerTestCase {
    /// A row of the model: its text, and its keys as the model compares them.
    private struct Row {
        let id: Int
        /// The sort key: kind rank (null/missing 0, false 1, true 2, number 3, string 4) and value.
        let rank: Int
        let number: Double
        let string: [UInt8]
        let text: String
    }

    /// A random row: `score` missing, null, a Boolean, a number (written in several ways) or
    /// a string (sometimes with escapes).
    private func row(_ id: Int, _ random: inout SplitMix64) -> Row {
        let strings = ["", "a", "ab", "b", "\u{E9}", "\u{1F600}", "Z"]
        switch random.below(6) {
        case 0: return Row(id: id, rank: 0, number: 0, string: [], text: #"{"id":\#(id),"t":"r\#(id)"}"#)
        case 1: return Row(id: id, rank: 0, number: 0, string: [], text: #"{"id":\#(id),"score":null}"#)
        case 2:
            let value = random.chance(50)
            return Row(id: id, rank: value ? 2 : 1, number: 0, string: [], text: #"{"score":\#(value),"id":\#(id)}"#)
        case 3, 4:
            let value = Double(random.below(21) - 10) / 4
            let written = random.chance(50) ? "\(value)" : "\(Int(value * 100))e-2"
            return Row(id: id, rank: 3, number: value, string: [], text: #"{"id":\#(id),"score":\#(written),"n":{"score":"x"}}"#)
        default:
            let value = strings[random.below(strings.count)]
            let escaped = random.chance(50) ? value.unicodeScalars.map { String(format: "\\u%04x", $0.value < 0x10000 ? $0.value : 0x263A) }.joined() : value
            let model = escaped == value ? value : String(value.unicodeScalars.map { $0.value < 0x10000 ? Character($0) : "\u{263A}" })
            return Row(id: id, rank: 4, number: 0, string: Array(model.utf8), text: #"{"id":\#(id),"score":"\#(escaped)"}"#)
        }
    }

    /// Whether `left` comes before `right` by `-score`, then the identity.
    private func precedes(_ left: Row, _ right: Row) -> Bool {
        if left.rank != right.rank { return left.rank > right.rank }
        if left.rank == 3 && left.number != right.number { return left.number > right.number }
        if left.rank == 4 && left.string != right.string { return right.string.lexicographicallyPrecedes(left.string) }
        return left.id < right.id
    }

    private func list(_ rows: [Row]) -> String { "[" + rows.map(\.text).joined(separator: ",") + "]" }

    /// Random shuffled pairs of lists: the answer with `orderBy` is the answer for the pair
    /// the model sorted, byte for byte; in every format.
    func testBothSidesAreSortedAsTheModelSays() throws {
        let client = try startServer().client
        var random = SplitMix64(state: 140)
        for round in 0..<60 {
            var old: [Row] = []
            for id in 0..<random.below(12) { old.append(row(id, &random)) }
            var newRows: [Int: Row] = [:]
            for _ in 0..<random.below(12) {
                let id = random.below(16)
                newRows[id] = row(id, &random)
            }
            let shuffledNew = newRows.values.sorted { $0.id < $1.id }.shuffled(using: &random)
            let format = ["batch", "steps", "json-patch"][round % 3]
            let asked = try client.post("/diff", #"{"old":\#(list(old.shuffled(using: &random))),"new":\#(list(shuffledNew)),"options":{"orderBy":"-score","format":"\#(format)"}}"#)
            let presorted = try client.post("/diff", #"{"old":\#(list(old.sorted(by: precedes))),"new":\#(list(shuffledNew.sorted(by: precedes))),"options":{"format":"\#(format)"}}"#)
            XCTAssertEqual(asked.status, 200, asked.text)
            XCTAssertEqual(asked.text, presorted.text, "round \(round), \(format)")
        }
    }

    /// Sections sorted by their headers' members and rows within each by theirs, both at
    /// once; the keys may also be given as an array.
    func testSectionsAndTheirRowsAreSorted() throws {
        let client = try startServer().client
        let old = #"{"sections":[{"id":"b","rank":2,"items":[{"id":1,"s":5},{"id":2,"s":9}]},{"id":"a","rank":1,"items":[{"id":3,"s":1}]}]}"#
        let new = #"{"sections":[{"id":"a","rank":3,"items":[{"id":3,"s":1},{"id":4,"s":0}]},{"id":"b","rank":2,"items":[{"id":2,"s":9},{"id":1,"s":5}]}]}"#
        let sortedOld = #"{"sections":[{"id":"a","rank":1,"items":[{"id":3,"s":1}]},{"id":"b","rank":2,"items":[{"id":2,"s":9},{"id":1,"s":5}]}]}"#
        let sortedNew = #"{"sections":[{"id":"b","rank":2,"items":[{"id":2,"s":9},{"id":1,"s":5}]},{"id":"a","rank":3,"items":[{"id":3,"s":1},{"id":4,"s":0}]}]}"#
        let asked = try client.post("/diff", #"{"old":\#(old),"new":\#(new),"options":{"orderBy":["-s"],"sectionOrderBy":"rank"}}"#)
        let presorted = try client.post("/diff", #"{"old":\#(sortedOld),"new":\#(sortedNew)}"#)
        XCTAssertEqual(asked.status, 200, asked.text)
        XCTAssertEqual(asked.text, presorted.text)
    }

    /// A key holding an array or an object is 422 `invalid_sort_key` naming the row; an order
    /// that does not read is 400 `invalid_option`; sections ordered in a list, 422 `invalid_shape`.
    func testKeysAndOrdersThatDoNotSortAreRefused() throws {
        let client = try startServer().client
        let refused = try client.post("/diff", #"{"old":[{"id":1,"s":1},{"id":2,"s":[2]}],"new":[],"options":{"orderBy":"s"}}"#)
        let detail = assertProblem(refused, 422, "invalid_sort_key")["detail"] as? String ?? ""
        XCTAssertTrue(detail.hasPrefix(#"old[1]: its "s" is an array"#), detail)
        for bad in [#""""#, #""a,,b""#, #"["a,b"]"#, "[]", "[1]", "5", #""a,-a""#] {
            assertProblem(try client.post("/diff", #"{"old":[],"new":[],"options":{"orderBy":\#(bad)}}"#), 400, "invalid_option")
        }
        assertProblem(try client.post("/diff", #"{"old":[1],"new":[2],"options":{"sectionOrderBy":"rank"}}"#), 422, "invalid_shape")
    }
}
