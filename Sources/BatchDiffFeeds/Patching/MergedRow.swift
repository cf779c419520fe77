import BatchDiffJSON

/// What a `merge` op makes of a row (docs/feeds.md §3.1): its content with an RFC 7396
/// merge patch applied (``JSONMergePatch``), in time proportional to the row and the patch.
struct MergedRow {
    /// The row's new text.
    let text: [UInt8]
    /// The fingerprint of its content.
    let content: Fingerprint

    /// The row whose text is `current` merged with `patch`; `nil` when the result would not
    /// keep `identity`, the row's identity in a feed whose identity member is `idKey` (a
    /// merge changes a row, never which row it is).
    init?(_ current: ArraySlice<UInt8>, merging patch: JSONValue, identity: Fingerprint, idKey: String) throws(FeedError) {
        let merged: JSONDocument
        do {
            let text = JSONMergePatch.applying(patch, to: try JSONDocument(bytes: Array(current)).root)
            merged = try JSONDocument(bytes: text)
        } catch {
            throw .internalFailure("a row merged with a patch: \(error)")
        }
        guard merged.root.itemIdentity(idKey: idKey) == identity else { return nil }
        text = merged.bytes
        content = merged.root.fingerprint
    }

    /// Why a merge was refused, for op `id`.
    static func changesIdentity(of id: JSONValue, idKey: String) -> String {
        "the merge would change or remove the identity of row \(FeedPatch.describe(id)) (its \(idKey.debugDescription) member, or the whole row when it has none); upsert or remove it instead"
    }
}
