import BatchDiff
import Foundation

/// Reading batch JSON (docs/batch-format.md §2), parsed by JSONSerialization, into the
/// core's batch types; empty lists may be left out, as §2.5 allows.
struct BatchDecodingError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

private func integer(_ value: Any?, _ what: String) throws -> Int {
    guard let number = value as? NSNumber else { throw BatchDecodingError("\(what): expected an integer, found \(String(describing: value))") }
    return number.intValue
}

private func integers(_ value: Any?, _ what: String) throws -> [Int] {
    guard let value else { return [] }
    guard let array = value as? [Any] else { throw BatchDecodingError("\(what): expected an array") }
    return try array.map { try integer($0, what) }
}

private func indexPath(_ value: Any?, _ what: String) throws -> BatchDiff.RowPath {
    let pair = try integers(value, what)
    guard pair.count == 2 else { throw BatchDecodingError("\(what): expected [section, row], found \(pair)") }
    return BatchDiff.RowPath(section: pair[0], row: pair[1])
}

private func indexPaths(_ value: Any?, _ what: String) throws -> [BatchDiff.RowPath] {
    guard let value else { return [] }
    guard let array = value as? [Any] else { throw BatchDecodingError("\(what): expected an array") }
    return try array.map { try indexPath($0, what) }
}

private func moves<Index>(_ value: Any?, _ what: String, _ index: @escaping (Any?, String) throws -> Index) throws -> [Move<Index>] {
    guard let value else { return [] }
    guard let array = value as? [[String: Any]] else { throw BatchDecodingError("\(what): expected an array of moves") }
    return try array.map { Move(from: try index($0["from"], what + ".from"), to: try index($0["to"], what + ".to")) }
}

/// A list batch from the members `rows` and `counts` of `object`.
func decodeListBatch(_ object: [String: Any]) throws -> ListBatch {
    guard object["sections"] == nil else { throw BatchDecodingError("a list batch has no sections member") }
    let rows = object["rows"] as? [String: Any] ?? [:]
    guard let counts = object["counts"] as? [String: Any] else { throw BatchDecodingError("counts is missing") }
    return ListBatch(
        rows: RowChanges(
            deleted: try integers(rows["deleted"], "rows.deleted"),
            inserted: try integers(rows["inserted"], "rows.inserted"),
            reloaded: try integers(rows["reloaded"], "rows.reloaded"),
            moved: try moves(rows["moved"], "rows.moved", integer)
        ),
        oldCount: try integer(counts["old"], "counts.old"),
        newCount: try integer(counts["new"], "counts.new")
    )
}

/// A sectioned batch from the members `sections`, `rows` and `counts` of `object`.
func decodeSectionedBatch(_ object: [String: Any]) throws -> SectionedBatch {
    let sections = object["sections"] as? [String: Any] ?? [:]
    let rows = object["rows"] as? [String: Any] ?? [:]
    guard let counts = object["counts"] as? [String: Any] else { throw BatchDecodingError("counts is missing") }
    return SectionedBatch(
        sections: SectionChanges(
            deleted: try integers(sections["deleted"], "sections.deleted"),
            inserted: try integers(sections["inserted"], "sections.inserted"),
            updated: try integers(sections["updated"], "sections.updated"),
            moved: try moves(sections["moved"], "sections.moved", integer)
        ),
        rows: RowChanges(
            deleted: try indexPaths(rows["deleted"], "rows.deleted"),
            inserted: try indexPaths(rows["inserted"], "rows.inserted"),
            reloaded: try indexPaths(rows["reloaded"], "rows.reloaded"),
            moved: try moves(rows["moved"], "rows.moved", indexPath)
        ),
        oldCounts: try integers(counts["old"], "counts.old"),
        newCounts: try integers(counts["new"], "counts.new")
    )
}

/// The `values` member of a changes answer, for a list feed.
func decodeListValues(_ object: [String: Any]) throws -> BatchValues<ListHeader, JSONElement> {
    guard let values = object["values"] as? [String: Any] else { throw BatchDecodingError("values is missing") }
    let rows = values["rows"] as? [String: Any] ?? [:]
    return BatchValues(
        insertedRows: (rows["inserted"] as? [Any] ?? []).map { JSONElement($0) },
        reloadedRows: (rows["reloaded"] as? [Any] ?? []).map { JSONElement($0) }
    )
}

/// The `values` member of a changes answer, for a sectioned feed.
func decodeSectionedValues(_ object: [String: Any]) throws -> BatchValues<JSONElement, JSONElement> {
    guard let values = object["values"] as? [String: Any] else { throw BatchDecodingError("values is missing") }
    let rows = values["rows"] as? [String: Any] ?? [:]
    let sections = values["sections"] as? [String: Any] ?? [:]
    let updated = sections["updated"] as? [Any] ?? []
    for header in updated where (header as? [String: Any])?["items"] != nil {
        throw BatchDecodingError("values.sections.updated: a header carries items: \(canonicalJSON(header))")
    }
    return BatchValues(
        insertedRows: (rows["inserted"] as? [Any] ?? []).map { JSONElement($0) },
        reloadedRows: (rows["reloaded"] as? [Any] ?? []).map { JSONElement($0) },
        insertedSections: (sections["inserted"] as? [Any] ?? []).map(sectionElement),
        updatedHeaders: updated.map { JSONElement(header: $0) }
    )
}
