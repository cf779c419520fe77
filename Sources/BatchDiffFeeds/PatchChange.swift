import BatchDiffJSON

/// What a patch did to a feed's collection, found from what it named (``ListPatchChange``,
/// ``SectionedPatchChange``): the batch, the texts its `values` carry, and the new text as a
/// change of the old one and back (``TextDelta``).
struct PatchChange {
    let batch: JSONBatch
    let values: ValueTexts
    /// The new text as a change of the old, and the old as a change of the new.
    let forward: TextDelta
    let backward: TextDelta
    /// The new text's length.
    let textCount: Int
    /// Whether every row and section the patch named is still there with the very text it
    /// had (not only an equal JSON value): with an empty batch, the new text is then the old
    /// byte for byte, and the rows patched still read as the version does.
    let namedKeepTheirTexts: Bool
}
