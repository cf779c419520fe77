import BatchDiffJSON

/// Where a page of a feed's latest collection starts (docs/feeds.md §4.1).
package enum PageStart: Sendable, Hashable {
    /// At a position: of a list's rows, or of a sectioned collection's sections.
    case offset(Int)
    /// Just after the row (the section) of an identity, as a client sent it: read as JSON
    /// when it is JSON and the collection has that identity (a number, say), else as a
    /// string.
    case after(String)
}

/// A page of a feed's latest collection, `{"feed","version","total","offset","data","next"}`:
/// read from the collection as patches keep it (``PatchRows``), in time proportional to the
/// page, times a logarithm, whatever the collection's size; written after (so the rows are
/// held only while the page's texts are found).
struct CollectionPage: Sendable {
    /// The rows (sections) of the whole collection.
    let total: Int
    /// The page's first position, as asked.
    let offset: Int
    /// The page's data: the rows' JSON array, or the collection's text with only the
    /// page's sections.
    let data: [UInt8]
    /// The text of the page's last row (section) when more follow it, whose identity is
    /// the page's `next`.
    let last: [UInt8]?
    let isSectioned: Bool

    /// The page of `limit` rows (sections) of `rows`, of feed `feed`, from `start`.
    /// ``FeedError/cursorGone(_:cursor:)`` when `after` names no row;
    /// ``FeedError/duplicateIdentity(_:)`` when it names several.
    init(_ rows: borrowing PatchRows, feed: FeedID, from start: PageStart, limit: Int) throws(FeedError) {
        let order = switch rows {
        case .list(let list): list.order
        case .sectioned(let sections): sections.order
        }
        offset = try Self.position(of: start, in: order, feed: feed)
        total = order.count
        let from = min(offset, total)
        let nodes = order.rows(at: from..<from + min(limit, total - from))
        let texts: [ArraySlice<UInt8>]
        switch rows {
        case .list(let list):
            texts = nodes.map { list.texts[list.order.location(of: $0)] }
            var output = JSONOutput(capacity: texts.reduce(2) { $0 + $1.count + 1 })
            output.array(texts) { output, text in output.value(text: text) }
            data = output.bytes
            isSectioned = false
        case .sectioned(let sections):
            texts = nodes.map { sections.text(of: $0)[...] }
            data = sections.text(withSections: texts)
            isSectioned = true
        }
        last = from + nodes.count < total ? texts.last.map { Array($0) } : nil
    }

    /// The page's answer, version `version` of feed `feed`, whose identity member is `idKey`.
    func answer(feed: FeedID, version: Int, idKey: String) -> [UInt8] {
        var output = JSONOutput(capacity: data.count + 128)
        output.object { output in
            output.key("feed")
            output.string(feed.name)
            output.key("version")
            output.integer(version)
            output.key("total")
            output.integer(total)
            output.key("offset")
            output.integer(offset)
            output.key("data")
            output.value(text: data)
            guard let last else { return }
            output.key("next")
            output.value(text: Self.cursor(of: last, idKey: idKey, isSection: isSectioned))
        }
        return output.bytes
    }

    /// The position a page from `start` begins at.
    private static func position(of start: PageStart, in order: RowOrder, feed: FeedID) throws(FeedError) -> Int {
        switch start {
        case .offset(let offset):
            return offset
        case .after(let text):
            let cursor = RowCursor(text)
            guard let node = try cursor.node(in: order, feed: feed) else { throw .cursorGone(feed, cursor: text) }
            return order.position(of: node) + 1
        }
    }

    /// The cursor of the row (section) whose text is `text`: its identity member's value,
    /// else (a row whose whole content is its identity) the row itself; `null` for a section
    /// without an identity member (its identity, its header, is no value to send back).
    private static func cursor(of text: [UInt8], idKey: String, isSection: Bool) -> ArraySlice<UInt8> {
        let null = Array("null".utf8)[...]
        guard let value = try? JSONDocument(bytes: text).root else { return null }
        if value.isObject, let member = value.member(named: idKey), member.canBeIdentity { return member.text }
        return isSection ? null : text[...]
    }
}

