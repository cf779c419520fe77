/// A feed's latest collection as patches keep it from one to the next (``RowOrderCache``):
/// a list's rows, or a sectioned collection's sections and rows.
enum PatchRows {
    case list(ListRows)
    case sectioned(SectionedRows)

    /// The collection of `snapshot` (read whole).
    init(of snapshot: Snapshot) throws(FeedError) {
        self = snapshot.isList ? .list(ListRows(of: snapshot)) : .sectioned(try SectionedRows(of: snapshot))
    }

    /// The collection `patch` makes of this one, in a feed with `settings`, and what it
    /// changed; ``FeedError/patchRefused(_:)`` for an op that cannot be applied.
    consuming func patched(by patch: FeedPatch, settings: FeedSettings) throws(FeedError) -> (rows: PatchRows, change: PatchChange) {
        switch consume self {
        case .list(let rows):
            var list = PatchedList(rows, settings: settings, patch: patch)
            try list.apply(patch)
            return (.list(list.rows), try ListPatchChange.change(of: list))
        case .sectioned(let rows):
            var sections = PatchedSections(rows, settings: settings, patch: patch)
            try sections.apply(patch)
            return (.sectioned(sections.rows), try SectionedPatchChange.change(of: sections))
        }
    }

    /// Whether it is worth keeping for the next patch: the patches' texts it holds have not
    /// passed the collection's own (past that, it is read again from the collection).
    var isWorthKeeping: Bool {
        switch self {
        case .list(let rows): rows.texts.patchBytes <= rows.order.textCount
        case .sectioned(let rows): rows.texts.patchBytes <= rows.textCount
        }
    }

    /// Bytes held, estimated (the version's text aside: its snapshot holds it too).
    var byteEstimate: Int {
        switch self {
        case .list(let rows): rows.byteEstimate
        case .sectioned(let rows): rows.byteEstimate
        }
    }
}
