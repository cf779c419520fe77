import BatchDiff
import Foundation

/// Collections on which the batch without moves was not the smallest (issue 37 §8): sectioned
/// collections whose rows repeat, `old` and `new` as `batchdiff diff --no-moves` read them
/// (copied from the issue's `NAME.old.json` and `NAME.new.json`, byte for byte). Read as test
/// sections by ``testSections(old:new:)``.
enum RepeatedRowCases {
    static let all: [(name: String, old: String, new: String)] = [
        (
            "sectioned_75_dup_objects",
            #"{"sections": [{"id": "S1", "items": [{"id": "x", "v": 2}, {"id": "1", "v": 2}, {"id": 2, "v": 0}, {"id": 1, "v": 2}, {"id": 3, "v": 2}], "title": "t1"}, {"id": "S2", "items": [{"id": 2, "v": 0}, {"id": "1", "v": 0}, {"id": 1, "v": 1}], "title": "t2", "meta": {"n": 0, "f": [1, 2]}}, {"id": "S3", "items": [{"id": "1", "v": 0}, {"id": 3, "v": 1}, {"id": "x", "v": 2}, {"id": 3, "v": 1}], "title": "t2"}, {"id": "S4", "items": [{"id": 1, "v": 1}, {"id": "1", "v": 2}, {"id": 2, "v": 2}, {"id": 2, "v": 0}, {"id": 2, "v": 1}, {"id": "1", "v": 2}, {"id": 2, "v": 2}], "title": "t2"}]}"#,
            #"{"sections": [{"title": "t2", "items": [{"v": 1, "id": "x"}, {"id": 2, "v": 3}, {"id": 2, "v": 1.0}], "id": "S2"}, {"meta": {"n": 1.0}, "items": [{"v": 2, "id": 1}, {"id": 1.0, "v": 1.0}, {"id": "1", "v": 3}, {"id": "1", "v": 2.0}, {"id": 2, "v": 1.0}, {"v": 0, "id": "1"}, {"v": 2.0, "id": 1.0}, {"id": "1", "v": 3}, {"v": 2.0, "id": 1}], "title": "t3", "id": "S4"}, {"meta": {"f": [1.0, 2], "n": 1}, "items": [{"v": 2.0, "id": 2}, {"id": "1", "v": 1.0}, {"v": 3, "id": 1.0}], "title": "t2", "id": "S5"}]}"#
        ),
        (
            "sectioned_138_dup_objects_dupsec",
            #"{"sections": [{"id": "C", "items": [{"id": 2, "v": 1}, {"id": "x", "v": 2}, {"id": 3, "v": 1}, {"id": "x", "v": 1}, {"id": "x", "v": 1}, {"id": 2, "v": 1}]}, {"id": "B", "items": [{"id": "1", "v": 0}, {"id": 1, "v": 0}, {"id": 1, "v": 2}, {"id": "x", "v": 0}, {"id": 3, "v": 1}, {"id": "1", "v": 1}, {"id": 3, "v": 1}, {"id": "x", "v": 1}]}, {"id": "A", "items": [{"id": 2, "v": 0}, {"id": 1, "v": 0}, {"id": "x", "v": 2}, {"id": 2, "v": 1}, {"id": 3, "v": 0}, {"id": "x", "v": 0}, {"id": 2, "v": 2}, {"id": "x", "v": 0}]}, {"id": "B", "items": [{"id": 1, "v": 1}, {"id": 2, "v": 1}, {"id": 1, "v": 1}, {"id": 2, "v": 1}], "title": "t2"}, {"id": "B", "items": [], "title": "t1"}, {"id": "A", "items": [], "title": "t2"}]}"#,
            #"{"sections": [{"id": "B", "items": [{"id": 3, "v": 2}, {"id": 3, "v": 1}], "title": "t1"}, {"id": "A", "items": []}, {"id": "A", "items": [], "title": "t4"}, {"id": "C", "items": [{"id": "x", "v": 3}, {"id": "x", "v": 2}, {"id": 1, "v": 0}, {"id": "x", "v": 2}, {"id": 3, "v": 2}, {"id": 2, "v": 2}, {"id": "x", "v": 1}, {"id": "1", "v": 1}, {"id": "1", "v": 2}, {"id": 1, "v": 0}, {"id": 1, "v": 0}, {"id": 1, "v": 2}], "title": "t1"}]}"#
        ),
        (
            "sectioned_157_mixed",
            #"{"sections": [{"id": "S1", "items": []}, {"id": "S2", "items": [-1, "\u00e9", 1, false, [1]]}, {"id": "S3", "items": ["0", true, 0, "\u00e9", "0", 0, true], "title": "t2"}, {"id": "S4", "items": [], "title": "t1"}, {"id": "S5", "items": [2, 2, null, true, "a", 1.5, {"k": 1}], "title": "t2"}, {"id": "S6", "items": [{"k": 1}, -1, false, "\u00e9", "2", [1], 2, [1]], "title": "t2"}]}"#,
            #"{"sections": [{"id": "S1", "items": [0]}, {"id": "S2", "items": [-1, "\u00e9", 1, false, [1]]}, {"id": "S3", "items": ["0", true, "\u00e9", "0", 0, true], "title": "t2"}, {"id": "S4", "items": [{"k": 1}], "title": "t1", "meta": {"n": 1}}, {"id": "S5", "items": [2, 2, null, true, "a", 1.5], "title": "t2"}, {"id": "S6", "items": [{"k": 1}, -1, false, "\u00e9", "2", [1], 2, [1]], "title": "t2"}]}"#
        ),
        (
            "sectioned_238_nested",
            #"{"sections": [{"id": "S1", "items": [{"a": 1, "b": {"c": [1, {"d": "e"}]}}, {"a": 2, "b": {"c": [2, {"d": "e"}]}}, {"a": 0, "b": {"c": [0, {"d": "e"}]}}, {"a": 2, "b": {"c": [0, {"d": "e"}]}}], "title": "t1"}, {"id": "S2", "items": [{"a": 1, "b": {"c": [0, {"d": "e"}]}}], "title": "t3", "meta": {"n": 2, "f": [1, 2]}}, {"id": "S3", "items": [{"a": 0, "b": {"c": [2, {"d": "e"}]}}, {"a": 2, "b": {"c": [0, {"d": "e"}]}}, {"a": 2, "b": {"c": [2, {"d": "e"}]}}, {"a": 0, "b": {"c": [2, {"d": "e"}]}}, {"a": 2, "b": {"c": [1, {"d": "e"}]}}, {"a": 1, "b": {"c": [2, {"d": "e"}]}}, {"a": 1, "b": {"c": [2, {"d": "e"}]}}], "title": "t1", "meta": {"n": 2, "f": [1, 2]}}]}"#,
            #"{"sections": [{"id": "S1", "title": "t1", "items": [{"a": 1.0, "b": {"c": [1.0, {"d": "e"}]}}, {"b": {"c": [2, {"d": "e"}]}, "a": 2.0}, {"b": {"c": [0, {"d": "e"}]}, "a": 0}, {"b": {"c": [2.0, {"d": "e"}]}, "a": 0.0}, {"b": {"c": [0, {"d": "e"}]}, "a": 2.0}]}, {"title": "t3", "meta": {"f": [1, 2], "n": 2.0}, "id": "S2", "items": [{"a": 2.0, "b": {"c": [1.0, {"d": "e"}]}}, {"b": {"c": [0.0, {"d": "e"}]}, "a": 1}]}, {"items": [{"a": 2.0, "b": {"c": [0.0, {"d": "e"}]}}, {"b": {"c": [2.0, {"d": "e"}]}, "a": 2}, {"b": {"c": [2, {"d": "e"}]}, "a": 0}, {"a": 1, "b": {"c": [2, {"d": "e"}]}}, {"a": 1, "b": {"c": [2.0, {"d": "e"}]}}], "id": "S3", "title": "t1", "meta": {"f": [1.0, 2], "n": 2}}]}"#
        ),
    ]
}

/// The sections of the collections `old` and `new` (JSON, `{"sections": [...]}`) as test
/// sections, read as the differ's JSON reading reads them: a row's identity is its `id`
/// member when that is a string or a number, else its whole value; a section's identity is
/// its `id` member, its header content every member but `items`. Values compare as JSON
/// (member order ignored, `1 == 1.0`); each identity and each content gets a number, the same
/// in both collections.
func testSections(old: String, new: String) throws -> (old: [TestSection], new: [TestSection]) {
    var numbers: [String: Int] = [:]
    func number(_ key: String) -> Int {
        if let number = numbers[key] { return number }
        numbers[key] = numbers.count
        return numbers.count - 1
    }
    func sections(_ text: String) throws -> [TestSection] {
        guard case .object(let collection) = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)),
              case .array(let sections) = collection["sections"] else { throw JSONValue.NotACollection() }
        return try sections.map { section in
            guard case .object(var members) = section, case .array(let items) = members.removeValue(forKey: "items") else {
                throw JSONValue.NotACollection()
            }
            let content = JSONValue.object(members).canonical
            let header = Header(id: number(section.identityMember?.canonical ?? content), title: number(content))
            return TestSection(header: header, items: items.map { item in
                Row(id: number(item.identityMember?.canonical ?? item.canonical), content: number(item.canonical))
            })
        }
    }
    return (try sections(old), try sections(new))
}

/// A JSON value, compared by its ``canonical`` form.
private indirect enum JSONValue: Decodable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    struct NotACollection: Error {}

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// The value written with numbers as doubles and members sorted by name: equal for
    /// values equal as JSON.
    var canonical: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .number(let value): "\(value)"
        case .string(let value): value.debugDescription
        case .array(let values): "[" + values.map(\.canonical).joined(separator: ",") + "]"
        case .object(let members):
            "{" + members.sorted { $0.key < $1.key }.map { "\($0.key.debugDescription):\($0.value.canonical)" }.joined(separator: ",") + "}"
        }
    }

    /// The `id` member of an object, when it is a string or a number: the identity it gives.
    var identityMember: JSONValue? {
        guard case .object(let members) = self, let member = members["id"] else { return nil }
        switch member {
        case .string, .number: return member
        default: return nil
        }
    }
}
