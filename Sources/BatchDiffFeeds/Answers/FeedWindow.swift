/// A window of a feed: a list's rows, or a sectioned collection's sections, each whole,
/// `offset..<offset+limit`, or the `limit` after the row (section) of identity `after`
/// (docs/feeds.md §5.3).
package struct FeedWindow: Sendable, Hashable {
    package var offset: Int
    package var limit: Int
    /// The identity of the row (section) the window starts after, in each version, when it
    /// is anchored on one (its `offset` then unused).
    package var after: String?

    package init(offset: Int, limit: Int) {
        self.offset = offset
        self.limit = limit
    }

    /// The window of the `limit` rows (sections) after the one of identity `after`.
    package init(after: String, limit: Int) {
        offset = 0
        self.limit = limit
        self.after = after
    }
}
