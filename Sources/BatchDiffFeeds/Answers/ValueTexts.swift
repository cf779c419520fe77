import BatchDiffJSON

/// The texts of a `changes` answer's `values` (docs/batch-format.md §6), in the batch's
/// order: rows inserted and reloaded, and for a sectioned batch each inserted section's
/// whole text and each updated section's text, whose header (the text without `items`) the
/// answer carries; with `merge` (`values=merge`), the entries written for the reloaded rows
/// and updated headers in their place.
struct ValueTexts: Sendable {
    var insertedRows: [ArraySlice<UInt8>] = []
    var reloadedRows: [ArraySlice<UInt8>] = []
    var insertedSections: [ArraySlice<UInt8>] = []
    var updatedSections: [ArraySlice<UInt8>] = []
    var merge: MergeValues?
    /// What a patch also knows (empty otherwise): the old text of each reloaded row and
    /// updated header, aligned as the new ones.
    var reloadedRowsBefore: [ArraySlice<UInt8>] = []
    var updatedSectionsBefore: [ArraySlice<UInt8>] = []

    /// These values with merge entries made from a patch's old and new texts.
    var mergedFromPatch: ValueTexts {
        var merged = self
        merged.merge = MergeValues(changedRows: zip(reloadedRowsBefore, reloadedRows), changedSections: zip(updatedSectionsBefore, updatedSections))
        return merged
    }
}
