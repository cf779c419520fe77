import BatchDiffJSON

/// A row as the follower holds it: the values of a shape's ``ServedShape/columns``, in
/// their text forms.
typealias SourceRow = [PgOutputMessage.TupleValue]

/// Rows read by a shape: which feed a row belongs to, its identity, its JSON.
extension ServedShape {
    /// The row of `tuple` (a relation's columns, in the stream's order) by `mapping` (for
    /// each of ``columns``, its position in the relation; `nil`: not sent, read as NULL).
    func row(of tuple: [PgOutputMessage.TupleValue], mapping: [Int?]) -> SourceRow {
        mapping.map { position in position.flatMap { $0 < tuple.count ? tuple[$0] : nil } ?? .null }
    }

    /// The row of a text-format query's values (``selectStatement(quoting:)``).
    func row(ofSelected values: [[UInt8]?]) -> SourceRow {
        values.map { $0.map(PgOutputMessage.TupleValue.text) ?? .null }
    }

    /// The values of the feed template's placeholders the row gives (in
    /// ``placeholderNames``' order), or `nil` when a `where` test fails.
    func placeholderValues(of row: SourceRow) -> [String]? {
        var values = [String?](repeating: nil, count: placeholderNames.count)
        for (column, test) in tests {
            switch (test, row[column]) {
            case (.isNull, .null): continue
            case (.equals(let canonical), .text(let text)):
                guard text.elementsEqual(canonical.utf8) else { return nil }
            case (.placeholder(let name), .text(let text)):
                let index = placeholderNames.firstIndex(of: name)!
                let value = String(decoding: text, as: UTF8.self)
                guard values[index].map({ $0 == value }) ?? true else { return nil }
                values[index] = value
            default: return nil
            }
        }
        return values.map { $0 ?? "" }
    }

    /// The row's key, its identity's text form (`nil`: the key is NULL or not sent).
    func key(of row: SourceRow) -> [UInt8]? {
        if case .text(let text) = row[key] { return text }
        return nil
    }

    /// Writes the row's members as a JSON object.
    func writeItem(_ row: SourceRow, to output: inout JSONOutput) {
        output.object { output in
            for index in 0..<memberCount {
                output.key(text: quotedNames[index])
                ColumnJSON.write(row[index].text, as: columns[index].kind, to: &output)
            }
        }
    }

    /// Writes the row's identity (its key's JSON).
    func writeIdentity(_ row: SourceRow, to output: inout JSONOutput) {
        ColumnJSON.write(row[key].text, as: columns[key].kind, to: &output)
    }

    /// The header of the row's section, `{"<sectionBy>": value}`, as JSON text (empty for
    /// a shape without sections).
    func sectionHeader(of row: SourceRow) -> [UInt8] {
        guard let section else { return [] }
        var output = JSONOutput()
        output.object { output in
            output.key(text: quotedNames[section])
            ColumnJSON.write(row[section].text, as: columns[section].kind, to: &output)
        }
        return output.bytes
    }

    /// The key column's name, the feed's `idKey`.
    var keyName: String { columns[key].name }
}

extension PgOutputMessage.TupleValue {
    /// The text form, `nil` for NULL (and for an unchanged TOASTed value not filled in).
    var text: ArraySlice<UInt8>? {
        if case .text(let bytes) = self { return bytes[...] }
        return nil
    }
}
