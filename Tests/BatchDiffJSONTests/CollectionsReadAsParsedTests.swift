import BatchDiff
import BatchDiffJSON
import TestSupport
import XCTest

/// Collections read as the document is parsed are the collections read from the whole tape:
/// lists and sections, identity members present, absent or not a string or number, repeated
/// `sections` and `items` members, for random documents from a fixed seed.
final class CollectionsReadAsParsedTests: XCTestCase {
    private func value(_ rng: inout SplitMix64, depth: Int) -> String {
        switch Int.random(in: 0..<(depth > 2 ? 4 : 7), using: &rng) {
        case 0: return "\(Int.random(in: -3...3, using: &rng))"
        case 1: return ["\"a\"", "\"b\"", "\"\\u0061\"", "1.0", "null", "true"].randomElement(using: &rng)!
        case 2, 3: return "\(Int.random(in: 0...5, using: &rng))"
        case 4, 5:
            // Distinct names: an object naming one twice is refused (duplicate_member).
            let names = ["id", "key", "t", "items"].shuffled(using: &rng).prefix(Int.random(in: 0...3, using: &rng))
            let members = names.map { name in "\"" + name + "\":" + value(&rng, depth: depth + 1) }
            return "{" + members.joined(separator: ",") + "}"
        default:
            return "[" + (0..<Int.random(in: 0...3, using: &rng)).map { _ in value(&rng, depth: depth + 1) }.joined(separator: ",") + "]"
        }
    }

    private func items(_ rng: inout SplitMix64) -> String {
        "[" + (0..<Int.random(in: 0...8, using: &rng)).map { _ in value(&rng, depth: 1) }.joined(separator: ",") + "]"
    }

    private func collection(_ rng: inout SplitMix64) -> String {
        guard Bool.random(using: &rng) else { return items(&rng) }
        let sections = (0..<Int.random(in: 0...4, using: &rng)).map { _ in
            let members = ["\"items\":" + items(&rng), "\"id\":" + value(&rng, depth: 2)]
            return "{" + members.shuffled(using: &rng).joined(separator: ",") + "}"
        }
        var members = ["\"sections\":[" + sections.joined(separator: ",") + "]"]
        if Int.random(in: 0..<4, using: &rng) == 0 { members.append("\"title\":\"t\"") }
        return "{" + members.shuffled(using: &rng).joined(separator: ",") + "}"
    }

    /// The collection's identities and contents, and with `spans` where each element stands.
    private func described(_ collection: JSONCollection, spans: Bool = true) -> String {
        let element = { (element: JSONElement) in "\(element.identity)/\(element.content)" + (spans ? "@\(element.span)" : "") }
        return switch collection {
        case .list(let items): "list \(items.map(element))"
        case .sectioned(let sections): "sections \(sections.map { element($0.header) + " \($0.items.map(element))" })"
        }
    }

    func testReadAsParsedEqualsReadFromTheTape() throws {
        var rng = SplitMix64(state: 0xC011_EC7)
        for _ in 0..<3000 {
            let idKey = ["id", "key"].randomElement(using: &rng)!
            let text = collection(&rng)
            let tape = try JSONDocument(bytes: Array(text.utf8)).root.collection(idKey: idKey, path: "c")
            let parsed = try JSONDocument(bytes: Array(text.utf8), collections: .root, idKey: idKey)
            XCTAssertEqual(described(try parsed.root.collection(idKey: idKey, path: "c")), described(tape), text)
            XCTAssertEqual(parsed.root.fingerprint, try JSONDocument(bytes: Array(text.utf8)).root.fingerprint)

            let body = #"{"new":"# + collection(&rng) + #","old":"# + text + "}"
            let envelope = try JSONDocument(bytes: Array(body.utf8), collections: .rootMembers(["old", "new"]), idKey: idKey).root
            let old = try XCTUnwrap(envelope.members.first { $0.key.string == "old" }?.value)
            XCTAssertEqual(described(try old.collection(idKey: idKey, path: "old"), spans: false), described(tape, spans: false), body)
        }
    }
}
