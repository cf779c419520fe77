/// JSON merge patches (RFC 7396), applied to JSON text (what a `PATCH`'s `merge` op does to
/// a row's content) and made from two objects (what a `changes` answer asked with
/// `values=merge` carries for a changed row).
public enum JSONMergePatch {
    /// The text of `target` (`nil`: no value) with `patch` applied, as RFC 7396 §2 defines
    /// it: an object patch sets each of its members in the target (recursively, a
    /// non-object target read as `{}`) and removes those it sets to `null`; any other patch
    /// replaces the target. The target's members keep their order, new ones follow in the
    /// patch's; values the patch does not reach are copied as written.
    public static func applying(_ patch: JSONValue, to target: JSONValue?) -> [UInt8] {
        var output = JSONOutput(capacity: (target?.span.count ?? 0) + patch.span.count)
        write(patch, appliedTo: target, into: &output)
        return output.bytes
    }

    private static func write(_ patch: JSONValue, appliedTo target: JSONValue?, into output: inout JSONOutput) {
        guard patch.isObject else { return output.value(text: patch.text) }
        // (A patch names a member once: FeedPatch reads its body refusing repeated names.)
        var changes: [Fingerprint: JSONValue] = [:]
        for (key, value) in patch.members { changes[key.fingerprint] = value }
        let targetMembers = target.map { $0.isObject ? $0.members : [] } ?? []
        var reached = Set<Fingerprint>()
        output.object { output in
            for (key, value) in targetMembers {
                guard let change = changes[key.fingerprint] else {
                    output.key(text: key.text)
                    output.value(text: value.text)
                    continue
                }
                // A name the target repeats is set once, where it first stands.
                guard reached.insert(key.fingerprint).inserted, change.kind != .null else { continue }
                output.key(text: key.text)
                write(change, appliedTo: value, into: &output)
            }
            for (key, value) in patch.members where !reached.contains(key.fingerprint) && value.kind != .null {
                output.key(text: key.text)
                write(value, appliedTo: nil, into: &output)
            }
        }
    }

    /// The text of the merge patch that turns the object whose JSON text is `old` into the
    /// object whose text is `new`, each without its first member named `ignoring` (a
    /// section's `items`): the members `new` sets or changes (one that stays an object, by
    /// its own patch), and `null` for each it lacks. Values compare by their texts (a feed's
    /// are compact), so two texts of one value make a patch that sets it again. `nil` when no
    /// merge patch says it: either text is not an object, or a value the patch would carry is
    /// `null` or holds an object member whose value is `null` (a patch reads that as a
    /// removal). Read by scanning the texts, never parsing them: valid JSON whose objects
    /// name each member once, as every text a feed keeps is (a body naming one twice is a
    /// 400 `duplicate_member`).
    public static func patch(from old: ArraySlice<UInt8>, to new: ArraySlice<UInt8>, ignoring: String? = nil) -> [UInt8]? {
        var output = JSONOutput(capacity: 64)
        var scratch = Scratch()
        return write(from: old, to: new, ignoring: ignoring, scratch: &scratch, into: &output) ? output.bytes : nil
    }

    /// The members of the two objects a patch is made from, their room kept from one pair to
    /// the next.
    struct Scratch {
        var old: [JSONMemberScanner.Member] = []
        var new: [JSONMemberScanner.Member] = []
    }

    /// Writes ``patch(from:to:ignoring:)`` into `output`; false (and what was written left
    /// unfinished) when no merge patch says it.
    static func write(
        from old: ArraySlice<UInt8>, to new: ArraySlice<UInt8>, ignoring: String?, scratch: inout Scratch, into output: inout JSONOutput
    ) -> Bool {
        guard JSONMemberScanner.members(of: old, into: &scratch.old), JSONMemberScanner.members(of: new, into: &scratch.new) else { return false }
        if let ignoring {
            let name = Array(ignoring.utf8)
            if let first = scratch.old.firstIndex(where: { JSONMemberScanner.name($0, in: old) == name }) { scratch.old.remove(at: first) }
            if let first = scratch.new.firstIndex(where: { JSONMemberScanner.name($0, in: new) == name }) { scratch.new.remove(at: first) }
        }
        return writeChanges(from: (old, scratch.old), to: (new, scratch.new), into: &output)
    }

    /// An object's text and its members.
    private typealias Members = (text: ArraySlice<UInt8>, members: [JSONMemberScanner.Member])

    private static let null = Array("null".utf8)

    /// Writes the patch from the members `old` to `new`; false when a patch cannot say it.
    /// Members are found by name where they stand (a row's usually keep their order), else
    /// by a search: an object's members are few.
    private static func writeChanges(from old: Members, to new: Members, into output: inout JSONOutput) -> Bool {
        var reached = [Bool](repeating: false, count: old.members.count)
        var sayable = true
        output.object { output in
            for (position, member) in new.members.enumerated() {
                let was = position < old.members.count && JSONMemberScanner.sameName(old.members[position], in: old.text, member, in: new.text)
                    ? position : old.members.firstIndex { JSONMemberScanner.sameName($0, in: old.text, member, in: new.text) }
                let value = new.text[member.value]
                if let was {
                    reached[was] = true
                    if old.text[old.members[was].value].elementsEqual(value) { continue }
                }
                output.key(text: new.text[member.key])
                if let was, let before = JSONMemberScanner.members(of: old.text[old.members[was].value]), let after = JSONMemberScanner.members(of: value) {
                    guard writeChanges(from: (old.text, before), to: (new.text, after), into: &output) else { return sayable = false }
                } else {
                    guard carries(value) else { return sayable = false }
                    output.value(text: value)
                }
            }
            for (index, member) in old.members.enumerated() where !reached[index] {
                output.key(text: old.text[member.key])
                output.null()
            }
        }
        return sayable
    }

    /// Whether a patch carrying the value `text` whole gives that value: not `null`, and an
    /// object (merged into an empty one) sets no member to `null`, down through its objects.
    private static func carries(_ text: ArraySlice<UInt8>) -> Bool {
        guard !text.elementsEqual(null) else { return false }
        guard let members = JSONMemberScanner.members(of: text) else { return true }
        return members.allSatisfy { carries(text[$0.value]) }
    }
}
