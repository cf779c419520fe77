import BatchDiffFeeds
import BatchDiffJSON

/// What a `changes` request asks (docs/feeds.md §5): read from its path and query by
/// ``BatchDiffService/changesQuestion(_:_:since:)``.
struct ChangesQuestion {
    /// The feed.
    let id: FeedID
    /// The version the client holds.
    let since: Int
    /// Seconds it waits for the next version when it holds the latest (0: it does not).
    let wait: Int
    /// The answer's format and members.
    let options: AnswerOptions
    /// The window it follows, if any (`offset`, `limit`).
    let window: FeedWindow?
    /// The version a range ends at (`to`), if it asks for one.
    let rangeEnd: Int?
    /// The long poll's cursor (`cursor`), if it sends one.
    let cursor: Int?
}
