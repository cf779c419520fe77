/// JSON merge patches (RFC 7396), applied to JSON text: what a `PATCH`'s `merge` op does to
/// a row's content.
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
}
