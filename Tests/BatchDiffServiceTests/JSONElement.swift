import BatchDiff
import Foundation

/// The canonical text of a JSON value parsed by JSONSerialization: sorted keys, so two
/// JSON-equal values (member order aside) have the same text.
func canonicalJSON(_ value: Any) -> String {
    let data = try! JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
    return String(decoding: data, as: UTF8.self)
}

/// The JSON text of a value built from dictionaries, arrays, strings and numbers.
func jsonText(_ value: Any) -> String { canonicalJSON(value) }

/// Parses JSON text with JSONSerialization.
func parseJSON(_ text: String) -> Any { try! JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) }

/// An item (or a section header) of a collection as docs/batch-format.md §1 sees it: identity is the
/// `id` member of an object whose `id` is a string or a number, else the whole value;
/// content is the whole value.
struct JSONElement: Diffable, Hashable, CustomStringConvertible {
    let identity: String
    let content: String

    init(_ value: Any, idKey: String = "id") {
        if let object = value as? [String: Any], let id = object[idKey], Self.isStringOrNumber(id) {
            identity = canonicalJSON(id)
        } else {
            identity = canonicalJSON(value)
        }
        content = canonicalJSON(value)
    }

    /// A section header: the section without its `items`.
    init(header section: Any, idKey: String = "id") {
        var object = section as? [String: Any] ?? [:]
        object["items"] = nil
        self.init(object, idKey: idKey)
    }

    /// Whether JSONSerialization read `value` from a JSON string or number (it reads
    /// `true` and `false` as NSNumbers of type `c`).
    private static func isStringOrNumber(_ value: Any) -> Bool {
        if value is String { return true }
        guard let number = value as? NSNumber else { return false }
        return String(cString: number.objCType) != "c"
    }

    func isContentEqual(to other: JSONElement) -> Bool { content == other.content }

    var description: String { content }
}

typealias JSONSection = Section<JSONElement, JSONElement>

/// A list collection (a JSON array) as elements.
func listElements(_ value: Any) -> [JSONElement] {
    (value as? [Any] ?? []).map { JSONElement($0) }
}

/// A sectioned collection (`{"sections": [...]}`) as sections of elements.
func sectionElements(_ value: Any) -> [JSONSection] {
    let sections = (value as? [String: Any])?["sections"] as? [Any] ?? []
    return sections.map(sectionElement)
}

/// One section object (with its items) as a section of elements.
func sectionElement(_ value: Any) -> JSONSection {
    let items = (value as? [String: Any])?["items"] as? [Any] ?? []
    return JSONSection(header: JSONElement(header: value), items: items.map { JSONElement($0) })
}
