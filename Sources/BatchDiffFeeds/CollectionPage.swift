import BatchDiffJSON

/// Where a page of a feed's latest collection starts (docs/feeds.md §4.1).
public enum PageStart: Sendable, Hashable {
    /// At a position: of a list's rows, or of a sectioned collection's sections.
    case offset(Int)
    /// Just after the row (the section) of an identity, as a client sent it: read as JSON
    /// when it is JSON and the collection has that identity (a number, say), else as a
    /// string.
    case after(String)
}

/// A page of a feed's latest collection, `{"feed","version","total","offset","data","next"}`,
/// written from the collection as patches keep it (``PatchRows``): in time proportional to
/// the page, times a logarithm, whatever the collection's size.
enum CollectionPage {
    /// The page of `limit` rows (sections) of `rows`, version `version` of feed `feed`
    /// (identity member `idKey`), from `start`. ``FeedError/cursorGone(_:cursor:)`` when
    /// `after` names no row; ``FeedError/duplicateIdentity(_:)`` when it names several.
    static func write(
        _ rows: borrowing PatchRows, feed: FeedID, version: Int, idKey: String, from start: PageStart, limit: Int
    ) throws(FeedError) -> [UInt8] {
        let order = switch rows {
        case .list(let list): list.order
        case .sectioned(let sections): sections.order
        }
        let first = try position(of: start, in: order, feed: feed)
        let total = order.count
        let from = min(first, total)
        let nodes = order.rows(at: from..<from + min(limit, total - from))
        var output = JSONOutput(capacity: 256)
        output.object { output in
            output.key("feed")
            output.string(feed.name)
            output.key("version")
            output.integer(version)
            output.key("total")
            output.integer(total)
            output.key("offset")
            output.integer(first)
            output.key("data")
            var last: [UInt8] = []
            switch rows {
            case .list(let list):
                output.array(nodes) { output, node in
                    let text = list.texts[list.order.location(of: node)]
                    output.value(text: text)
                    if node == nodes.last { last = Array(text) }
                }
            case .sectioned(let sections):
                let texts = nodes.map { sections.text(of: $0)[...] }
                last = texts.last.map { Array($0) } ?? []
                output.value(text: sections.text(withSections: texts))
            }
            guard from + nodes.count < total else { return }
            output.key("next")
            output.value(text: cursor(of: last, idKey: idKey, isSection: !rows.isList))
        }
        return output.bytes
    }

    /// The position a page from `start` begins at.
    private static func position(of start: PageStart, in order: RowOrder, feed: FeedID) throws(FeedError) -> Int {
        switch start {
        case .offset(let offset):
            return offset
        case .after(let cursor):
            let asJSON = try? JSONDocument(bytes: Array(cursor.utf8)).root.fingerprint
            let asString = Fingerprint.string(cursor)
            for identity in [asJSON, asString].compactMap({ $0 }) {
                switch order.row(identity) {
                case .none: continue
                case .repeated: throw .duplicateIdentity("after: more than one row of feed \(feed) has the identity \(cursor); a cursor needs a unique one (page by offset)")
                case .row(let node): return order.position(of: node) + 1
                }
            }
            throw .cursorGone(feed, cursor: cursor)
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

extension PatchRows {
    /// Whether the collection is a list.
    var isList: Bool {
        if case .list = self { true } else { false }
    }
}
