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
    /// Whether the patch changed nothing, not even a text: the batch is empty and every row
    /// and section it named still has the very text it had (not only an equal JSON value),
    /// so the rows patched still read as the version does, byte for byte.
    let leavesTextAsItWas: Bool
}
