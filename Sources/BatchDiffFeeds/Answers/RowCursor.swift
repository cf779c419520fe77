import BatchDiff
import BatchDiffJSON

/// A row (or section) a client names by its identity, as a page's cursor or a window's
/// anchor (`after`, docs/feeds.md §4.1, §5.3): read as JSON when it is JSON and the
/// collection has that identity (a number, say), else as a string.
struct RowCursor {
    let text: String
    /// The identities it may name, the JSON reading first.
    private let identities: [Fingerprint]

    init(_ text: String) {
        self.text = text
        identities = [(try? JSONDocument(bytes: Array(text.utf8)).root.fingerprint), Fingerprint.string(text)].compactMap { $0 }
    }

    /// The row (section) it names in `order`, of feed `feed`; `nil` when there is none,
    /// ``FeedError/duplicateIdentity(_:)`` when it names several.
    func node(in order: RowOrder, feed: FeedID) throws(FeedError) -> Int32? {
        for identity in identities {
            switch order.row(identity) {
            case .none: continue
            case .repeated: throw .duplicateIdentity("after: more than one row of feed \(feed) has the identity \(text); a cursor needs a unique one (page by offset)")
            case .row(let node): return node
            }
        }
        return nil
    }

    /// The position just after the row (section) it names in the latest `rows` of feed
    /// `feed`: where a window anchored on it starts. ``FeedError/anchorGone(_:anchor:inVersion:)``
    /// when there is none.
    func windowStart(in rows: borrowing PatchRows, feed: FeedID) throws(FeedError) -> Int {
        let order = switch rows {
        case .list(let list): list.order
        case .sectioned(let sections): sections.order
        }
        guard let node = try node(in: order, feed: feed) else { throw .anchorGone(feed, anchor: text, inVersion: nil) }
        return order.position(of: node) + 1
    }

    /// Where a window anchored on it started in an older version, from `start`, where it
    /// starts in the latest, mapped back through `batches` (the versions' batches between,
    /// oldest first); `nil` when one of them inserts the row (it is new since, or changed and
    /// moved), which the batches cannot follow.
    static func windowStart(_ start: Int, before batches: [JSONBatch]) -> Int? {
        var position = start - 1
        for batch in batches.reversed() {
            let old = switch batch {
            case .list(let batch): batch.oldPosition(ofNew: position)
            case .sectioned(let batch): batch.oldSectionPosition(ofNew: position)
            }
            guard let old else { return nil }
            position = old
        }
        return position + 1
    }

    /// Where a window anchored on it starts in `collection`, an older version read whole;
    /// `nil` when the version has no such row (section).
    func windowStart(in collection: JSONCollection) -> Int? {
        let found = switch collection {
        case .list(let items): identities.lazy.compactMap { identity in items.firstIndex { $0.identity == identity } }.first
        case .sectioned(let sections): identities.lazy.compactMap { identity in sections.flat.headers.firstIndex { $0.identity == identity } }.first
        }
        return found.map { $0 + 1 }
    }
}
