@testable import BatchDiffFeeds
import TestSupport
import XCTest

/// ``TextDelta``: a version's text kept as its change from a neighbour's. Random lists of
/// rows and random edits: the delta makes the target exactly, through its bytes too;
/// chains compose into one that makes the same; a delta costs what changed; damaged bytes
/// are refused, never trusted.
final class TextDeltaTests: XCTestCase {
    /// A list's text and where each row stands.
    private struct ListText {
        var rows: [String]
        var text: [UInt8] { Array(("[" + rows.joined(separator: ",") + "]").utf8) }
        var spans: [Range<Int>] {
            var start = 1
            return rows.map { row in
                defer { start += row.utf8.count + 1 }
                return start..<start + row.utf8.count
            }
        }
    }

    private var random = SplitMix64(state: 0xDE17A)
    private var next = 0

    private func row() -> String {
        next += 1
        return #"{"id":\#(next),"title":"row \#(next)"}"#
    }

    /// A few random edits of `list`: inserts, deletes, changes and moves (rows keep their ids).
    private func edited(_ list: ListText) -> ListText {
        var rows = list.rows
        for _ in 0..<(1 + random.below(5)) {
            switch random.below(4) {
            case 0: rows.insert(row(), at: random.below(rows.count + 1))
            case 1 where !rows.isEmpty: rows.remove(at: random.below(rows.count))
            case 2 where !rows.isEmpty:
                let index = random.below(rows.count)
                rows[index] = rows[index].replacingOccurrences(of: "\"title\"", with: "\"v\":\(random.below(9)),\"title\"")
            case 3 where rows.count > 1:
                let moved = rows.remove(at: random.below(rows.count))
                rows.insert(moved, at: random.below(rows.count + 1))
            default: rows.append(row())
            }
        }
        return ListText(rows: rows)
    }

    /// For each row of `target`, a row of `base` with the same text (what a batch's
    /// unchanged rows give).
    private func sources(_ target: ListText, from base: ListText) -> [Int?] {
        var unused = Dictionary(grouping: base.rows.indices, by: { base.rows[$0] })
        return target.rows.map { row in unused[row]?.popLast() }
    }

    private func delta(_ target: ListText, from base: ListText) -> TextDelta {
        TextDelta(target: (target.text, target.spans), base: (base.text, base.spans), sources: sources(target, from: base))
    }

    func testADeltaMakesItsTargetAndSurvivesItsBytes() throws {
        var list = ListText(rows: (0..<50).map { _ in row() })
        for step in 0..<500 {
            let target = edited(list)
            let change = delta(target, from: list)
            XCTAssertEqual(try change.applied(to: list.text), target.text, "step \(step)")
            XCTAssertEqual(try TextDelta(encoded: change.encoded), change, "step \(step)")
            // Backward too: the older text from the newer.
            XCTAssertEqual(try delta(list, from: target).applied(to: target.text), list.text, "step \(step)")
            list = target
        }
    }

    func testAChainComposesIntoOneDelta() throws {
        var texts = [ListText(rows: (0..<40).map { _ in row() })]
        var changes: [TextDelta] = []
        for _ in 0..<60 {
            texts.append(edited(texts.last!))
            changes.append(delta(texts[texts.count - 1], from: texts[texts.count - 2]))
        }
        for start in stride(from: 0, to: 60, by: 7) {
            XCTAssertEqual(try TextDelta.text(applying: changes[start...], to: texts[start].text), texts.last!.text, "from \(start)")
        }
        XCTAssertEqual(try TextDelta.text(applying: [], to: texts[0].text), texts[0].text)
        XCTAssertThrowsError(try changes[1].composed(after: changes[1]), "deltas that do not follow one another")
        XCTAssertThrowsError(try changes[1].applied(to: texts[0].text))
    }

    func testAOneRowChangeCostsTheRow() throws {
        let list = ListText(rows: (0..<10_000).map { _ in row() })
        var changed = list
        changed.rows[5_000] = #"{"id":0,"title":"changed"}"#
        changed.rows.insert(row(), at: 0)
        let change = delta(changed, from: list)
        XCTAssertLessThan(change.encoded.count, 120, "\(change.pieces)")
        XCTAssertEqual(try change.applied(to: list.text), changed.text)
    }

    func testDamagedBytesAreRefused() throws {
        var list = ListText(rows: (0..<30).map { _ in row() })
        for _ in 0..<200 {
            let target = edited(list)
            let bytes = delta(target, from: list).encoded
            var damaged = bytes
            damaged[random.below(damaged.count)] ^= UInt8(1 + random.below(255))
            for candidate in [damaged, Array(bytes.prefix(random.below(bytes.count)))] {
                // Refused, or a delta of the right lengths: never a crash, never a read outside.
                if let read = try? TextDelta(encoded: candidate), let text = try? read.applied(to: list.text) {
                    XCTAssertEqual(text.count, read.count)
                }
            }
            list = target
        }
        XCTAssertThrowsError(try TextDelta(encoded: []))
        XCTAssertThrowsError(try TextDelta(encoded: [2, 0, 0, 0]))
        // Lengths that would overflow when added up, or ask for more than a text can be.
        let huge: [UInt8] = [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40]  // 2^62
        XCTAssertThrowsError(try TextDelta(encoded: [1] + huge + huge + [4] + [0, 0] + huge + [0, 0] + huge + [0, 0] + huge + [0, 0] + huge))
        XCTAssertThrowsError(try TextDelta(encoded: [1, 0x80, 0x80, 0x80, 0x80, 0x10, 0, 0]), "a base over 2 GiB")
    }
}
