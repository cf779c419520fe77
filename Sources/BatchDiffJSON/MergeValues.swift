/// For each content change of a batch, what a client holding the old content merges into it
/// (docs/batch-format.md §6, `values=merge`): `{"merge": P}`, P the RFC 7396 merge patch
/// from the old content to the new (``JSONMergePatch/patch(from:to:ignoring:)``), or
/// `{"item": I}`, the new content whole, where no merge patch says it (either content is not
/// an object, or a member's new value is `null`).
public struct MergeValues: Sendable, Equatable {
    /// Aligned with `rows.reloaded`: each entry's JSON text.
    public var rows: [[UInt8]]
    /// Aligned with `sections.updated`: each entry's JSON text, of the header (the section
    /// without `items`).
    public var sections: [[UInt8]]

    /// Entries given as they are, aligned with a batch's lists.
    public init(rows: [[UInt8]], sections: [[UInt8]]) {
        self.rows = rows
        self.sections = sections
    }

    /// The entries of `batch`, which turns `old` (a collection read from the JSON text
    /// `oldText`) into a version whose texts of the rows it reloads and the sections it
    /// updates are given, read already for the answer's values: `newRows` aligned with
    /// `rows.reloaded`, `newSections` (each section's text) with `sections.updated`.
    public init(of batch: JSONBatch, old: JSONCollection, oldText: [UInt8], newRows: [ArraySlice<UInt8>], newSections: [ArraySlice<UInt8>]) throws {
        let changes = try ContentChanges(of: batch, old: old, oldText: oldText, newRows: newRows, newSections: newSections)
        self.init(changedRows: changes.rows.lazy.map { ($0.old, $0.new) }, changedSections: changes.sections.lazy.map { ($0.old, $0.new) })
    }

    /// The entries of content changes given by their texts, old and new, in a batch's
    /// order: rows, and sections (whole, or headers; `items` is left out either way).
    public init(
        changedRows: some Sequence<(ArraySlice<UInt8>, ArraySlice<UInt8>)>, changedSections: some Sequence<(ArraySlice<UInt8>, ArraySlice<UInt8>)>
    ) {
        var scratch = JSONMergePatch.Scratch()
        rows = changedRows.map { old, new in Self.entry(from: old, to: new, ignoring: nil, scratch: &scratch) }
        sections = changedSections.map { old, new in Self.entry(from: old, to: new, ignoring: "items", scratch: &scratch) }
    }

    /// The entry that turns the JSON text `old` into `new` (each without its first member
    /// named `ignoring`), written once: the patch in place, else the item.
    static func entry(from old: ArraySlice<UInt8>, to new: ArraySlice<UInt8>, ignoring: String?, scratch: inout JSONMergePatch.Scratch) -> [UInt8] {
        var output = JSONOutput(capacity: 48)
        var sayable = false
        output.object { output in
            output.key("merge")
            sayable = JSONMergePatch.write(from: old, to: new, ignoring: ignoring, scratch: &scratch, into: &output)
        }
        return sayable ? output.bytes : item(new, ignoring: ignoring)
    }

    /// The entry that carries the JSON text `new` whole, `{"item": ...}`, without its first
    /// member named `ignoring` when it is an object.
    public static func item(_ new: ArraySlice<UInt8>, ignoring: String? = nil) -> [UInt8] {
        var output = JSONOutput(capacity: new.count + 12)
        output.object { output in
            output.key("item")
            guard let ignoring, var members = JSONMemberScanner.members(of: new) else { return output.value(text: new) }
            let name = Array(ignoring.utf8)
            if let first = members.firstIndex(where: { JSONMemberScanner.name($0, in: new) == name }) { members.remove(at: first) }
            output.object { output in
                for member in members {
                    output.key(text: new[member.key])
                    output.value(text: new[member.value])
                }
            }
        }
        return output.bytes
    }
}
