import BatchDiffJSON

/// What a patch did to a feed's collection, found from what it named (``ListPatchChange``,
/// ``SectionedPatchChange``): the batch, the texts its `values` carry, and the new text as a
/// change of the old one and back (``TextDelta``).
struct PatchChange {
    let batch: JSONBatch
    let values: Values
    /// The new text as a change of the old, and the old as a change of the new.
    let forward: TextDelta
    let backward: TextDelta
    /// The new text's length.
    let textCount: Int

    /// The texts of a batch's `values` (docs/batch-format.md §6), in its order.
    struct Values {
        var insertedRows: [ArraySlice<UInt8>] = []
        var reloadedRows: [ArraySlice<UInt8>] = []
        /// Each inserted section's whole text.
        var insertedSections: [[UInt8]] = []
        /// Each updated section's header: the section's text with its `items` empty.
        var updatedHeaders: [[UInt8]] = []
    }
}
