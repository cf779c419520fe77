import BatchDiff
import BatchDiffJSON
import TestSupport
import XCTest

/// A list's items kept column by column read back as the items they were made of, whether
/// their identities are their contents, members, or a mix that starts either way.
final class JSONItemsTests: XCTestCase {
    private func fingerprint(_ value: Int) -> Fingerprint { Fingerprint(high: UInt64(value), low: UInt64(value) &* 31) }

    func testItemsReadBackAsMade() {
        var rng = SplitMix64(state: 0x17E_A5)
        for _ in 0..<500 {
            let ownIdentityShare = Int.random(in: 0...4, using: &rng)  // out of 4: 0 none, 4 all
            let made = (0..<Int.random(in: 0...40, using: &rng)).map { position -> JSONItem in
                let content = fingerprint(Int.random(in: 0..<10, using: &rng))
                let identity = Int.random(in: 0..<4, using: &rng) < ownIdentityShare ? content : fingerprint(100 + position)
                return JSONItem(identity: identity, content: content, span: position * 3..<(position * 3 + 2))
            }
            let items = JSONItems(made)
            XCTAssertEqual(Array(items), made)
            XCTAssertEqual(Array(items.compacted()), made)
            var appended = JSONItems()
            for item in made { appended.append(item) }
            XCTAssertEqual(Array(appended), made)
        }
    }

    /// A list whose first identity member comes after its room was made (past 1,024 items):
    /// as parsed, the same items as read off the tape, with the identities kept from there.
    func testAnIdentityMemberAfterTheRoomWasMadeReadsAsFromTheTape() throws {
        let text = "[" + (0..<3000).map { $0 < 2000 ? "\($0 % 5)" : #"{"id":\#($0),"v":1}"# }.joined(separator: ",") + "]"
        let document = try JSONDocument(bytes: Array(text.utf8), collections: .root, idKey: "id")
        guard case .list(let items) = try document.root.collection(idKey: "id", path: "c"),
              case .list(let fromTape) = try JSONDocument(bytes: Array(text.utf8)).root.collection(idKey: "id", path: "c")
        else { return XCTFail("not a list") }
        XCTAssertEqual(Array(items), Array(fromTape))
        XCTAssertNotEqual(items[2500].identity, items[2500].content)
        XCTAssertEqual(items[1500].identity, items[1500].content)
    }

    /// Scalars are their own identity: 24 bytes an item, no identity column.
    func testAListOfScalarsKeepsNoIdentities() throws {
        let count = 5000
        let text = "[" + (0..<count).map { "\($0 % 7)" }.joined(separator: ",") + "]"
        let document = try JSONDocument(bytes: Array(text.utf8), collections: .root, idKey: "id")
        guard case .list(let items) = try document.root.collection(idKey: "id", path: "c") else { return XCTFail("not a list") }
        XCTAssertEqual(items.count, count)
        XCTAssertEqual(items.compacted().byteCount, count * 24)
        let tape = try JSONDocument(bytes: Array(text.utf8)).root.collection(idKey: "id", path: "c")
        guard case .list(let fromTape) = tape else { return XCTFail("not a list") }
        XCTAssertEqual(Array(items), Array(fromTape))
        XCTAssertEqual(String(decoding: text.utf8.dropFirst(items[4999].span.lowerBound).prefix(items[4999].span.count), as: UTF8.self), "\(4999 % 7)")
    }
}
