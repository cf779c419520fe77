@testable import BatchDiffFeeds
import BatchDiffJSON
import TestSupport
import XCTest

/// The counted tree a list's patches keep, against an array doing the same, and the
/// heaviest increasing run against every subsequence of small inputs.
final class RowOrderTests: XCTestCase {
    private func fingerprint(_ value: Int) -> Fingerprint { Fingerprint(high: 7, low: UInt64(value)) }

    func testPositionsAndBytesFollowRandomInsertsMovesAndRemoves() {
        var generator = SplitMix64(state: 38)
        for round in 0..<20 {
            // Rows `{"id":n}`-like texts of random lengths, in one text.
            var model: [(identity: Int, count: Int)] = (0..<Int.random(in: 0..<200, using: &generator)).map { ($0, Int.random(in: 1...9, using: &generator)) }
            var text: [UInt8] = [UInt8(ascii: "[")]
            var items = JSONItems()
            for (index, row) in model.enumerated() {
                if index > 0 { text.append(UInt8(ascii: ",")) }
                items.append(JSONItem(identity: fingerprint(row.identity), content: fingerprint(0), span: text.count..<text.count + row.count))
                text += repeatElement(UInt8(ascii: "x"), count: row.count)
            }
            text.append(UInt8(ascii: "]"))
            var order = RowOrder(items: items)
            order._checkInvariants()
            var next = model.count
            for _ in 0..<300 {
                switch Int.random(in: 0..<3, using: &generator) {
                case 0:
                    let count = Int.random(in: 1...9, using: &generator)
                    let at = Int.random(in: 0...model.count, using: &generator)
                    let row = order.newRow(identity: fingerprint(next), content: fingerprint(1), location: RowOrder.TextLocation(text: 0, start: 0, count: Int32(count)))
                    order.insert(row, at: at)
                    model.insert((next, count), at: at)
                    next += 1
                case 1 where !model.isEmpty:
                    let from = Int.random(in: 0..<model.count, using: &generator)
                    guard case .row(let row) = order.row(fingerprint(model[from].identity)) else { return XCTFail("row \(model[from]) not found") }
                    XCTAssertEqual(order.position(of: row), from)
                    order.detach(row)
                    let moved = model.remove(at: from)
                    let to = Int.random(in: 0...model.count, using: &generator)
                    order.insert(row, at: to)
                    model.insert(moved, at: to)
                case 2 where !model.isEmpty:
                    let at = Int.random(in: 0..<model.count, using: &generator)
                    guard case .row(let row) = order.row(fingerprint(model[at].identity)) else { return XCTFail("row \(model[at]) not found") }
                    order.remove(row)
                    XCTAssertEqual(order.row(fingerprint(model[at].identity)), .none)
                    model.remove(at: at)
                default:
                    continue
                }
                order._checkInvariants()
            }
            XCTAssertEqual(order.count, model.count, "round \(round)")
            XCTAssertEqual(order.textCount, 2 + model.reduce(0) { $0 + $1.count } + max(0, model.count - 1))
            var bytes = 0
            for (position, row) in model.enumerated() {
                guard case .row(let node) = order.row(fingerprint(row.identity)) else { return XCTFail("row \(row) not found") }
                XCTAssertEqual(order.position(of: node), position)
                XCTAssertEqual(order.bytes(before: position), bytes)
                XCTAssertEqual(order.offset(of: position), 1 + position + bytes)
                bytes += row.count
            }
        }
    }

    /// Rows put where `partitionPoint` says, by a key kept beside them, stand sorted by it
    /// (ties in the order they came), through inserts, re-placed rows and removals.
    func testPartitionPointKeepsRowsSorted() {
        var generator = SplitMix64(state: 41)
        var order = RowOrder(items: JSONItems())
        var keys: [Int32: Int] = [:]
        var model: [(identity: Int, key: Int)] = []
        func place(_ row: Int32, key: Int) -> Int {
            keys[row] = key
            let position = order.partitionPoint { keys[$0]! > key }
            order.insert(row, at: position)
            return position
        }
        for identity in 0..<2_000 {
            switch Int.random(in: 0..<4, using: &generator) {
            case 0 where !model.isEmpty:
                let index = Int.random(in: 0..<model.count, using: &generator)
                guard case .row(let row) = order.row(fingerprint(model[index].identity)) else { return XCTFail("no row \(model[index])") }
                order.detach(row)
                let key = Int.random(in: 0..<50, using: &generator)
                model[index].key = key
                let moved = model.remove(at: index)
                let position = place(row, key: key)
                model.insert(moved, at: model.lastIndex { $0.key <= key }.map { $0 + 1 } ?? 0)
                XCTAssertEqual(position, model.firstIndex { $0.identity == moved.identity })
            case 1 where !model.isEmpty:
                let removed = model.remove(at: Int.random(in: 0..<model.count, using: &generator))
                guard case .row(let row) = order.row(fingerprint(removed.identity)) else { return XCTFail("no row \(removed)") }
                order.remove(row)
            default:
                let key = Int.random(in: 0..<50, using: &generator)
                let row = order.newRow(identity: fingerprint(identity), content: fingerprint(0), location: RowOrder.TextLocation(text: 0, start: 0, count: 1))
                let position = place(row, key: key)
                model.insert((identity, key), at: model.lastIndex { $0.key <= key }.map { $0 + 1 } ?? 0)
                XCTAssertEqual(position, model.firstIndex { $0.identity == identity })
            }
        }
        order._checkInvariants()
        XCTAssertEqual(order.rowsInOrder().map { order.identity(of: $0) }, model.map { fingerprint($0.identity) })
        XCTAssertEqual(model.map(\.key), model.map(\.key).sorted())
    }

    func testRepeatedIdentitiesAreToldApart() {
        let items = JSONItems([1, 2, 1].enumerated().map { JSONItem(identity: fingerprint($0.element), content: fingerprint(0), span: 1 + 2 * $0.offset..<2 + 2 * $0.offset) })
        let order = RowOrder(items: items)
        let texts = RowTexts(Array("[a,b,c]".utf8))
        XCTAssertEqual(order.row(fingerprint(1)), .repeated)
        XCTAssertEqual(order.row(fingerprint(2)), .row(1))
        XCTAssertEqual(order.row(fingerprint(3)), .none)
        XCTAssertEqual(String(decoding: texts[order.location(of: 1)], as: UTF8.self), "b")
    }

    func testTheHeaviestIncreasingRunIsFound() {
        var generator = SplitMix64(state: 38)
        for _ in 0..<500 {
            let count = Int.random(in: 0...8, using: &generator)
            let keys = Array((0..<20).shuffled(using: &generator).prefix(count))
            let weights = (0..<count).map { _ in Int.random(in: 1...5, using: &generator) }
            let marked = heaviestIncreasingRun(keys: keys, weights: weights)
            let chosen = keys.indices.filter { marked[$0] }
            XCTAssertEqual(chosen.map { keys[$0] }, chosen.map { keys[$0] }.sorted(), "\(keys)")
            // The best over every subsequence.
            var best = 0
            for mask in 0..<(1 << count) {
                let picked = keys.indices.filter { mask & 1 << $0 != 0 }
                guard picked.map({ keys[$0] }) == picked.map({ keys[$0] }).sorted() else { continue }
                best = max(best, picked.reduce(0) { $0 + weights[$1] })
            }
            XCTAssertEqual(chosen.reduce(0) { $0 + weights[$1] }, best, "\(keys) \(weights)")
        }
    }
}
