import BatchDiffJSON

/// What one transaction changed in one made feed: the rows it touched as they were before
/// it, so that the `PATCH` that makes the feed's next version says only what changed
/// (docs/sources.md §4): removes, sections emptied and made, upserts.
struct FeedEdit: Sendable {
    /// The keys touched, in the order first touched, each with its row before the transaction.
    private(set) var touched: [(key: [UInt8], before: SourceRow?)] = []
    private var seen: Set<[UInt8]> = []
    /// Sections touched, each with its count of rows before the transaction.
    private var sectionsBefore: [[UInt8]: Int] = [:]

    /// Records that the row of `key`, `before` now, is about to change; `sectionCount`
    /// tells a section's rows now. (Given values, not the feed: a copy of the feed held
    /// while it changes would copy all its rows.)
    mutating func touch(_ key: [UInt8], before: SourceRow?, shape: ServedShape, sectionCount: ([UInt8]) -> Int) {
        guard seen.insert(key).inserted else { return }
        touched.append((key, before))
        if let before, shape.section != nil {
            let header = shape.sectionHeader(of: before)
            if sectionsBefore[header] == nil { sectionsBefore[header] = sectionCount(header) }
        }
    }

    /// Records that a section, of `count` rows now, is about to gain a row.
    mutating func touchSection(_ header: [UInt8], count: Int) {
        if sectionsBefore[header] == nil { sectionsBefore[header] = count }
    }

    /// The `PATCH` body (`{"ops": [...]}`) that takes the feed from before the transaction
    /// to `feed` as it is now: rows removed (from sections that keep rows), sections
    /// emptied removed, sections made with their rows, rows upserted into the sections
    /// they were in.
    func patch(to feed: MadeFeed, shape: ServedShape) -> [UInt8] {
        let sectioned = shape.section != nil
        let made = Set(sectionsBefore.filter { $0.value == 0 && feed.sectionCounts[$0.key] != nil }.keys)
        let emptied = sectionsBefore.filter { $0.value > 0 && feed.sectionCounts[$0.key] == nil }.keys
        var ops: [[UInt8]] = []
        for header in emptied {
            ops.append(Self.op("removeSection", ("id", header)))
        }
        var madeRows: [[UInt8]: [SourceRow]] = [:]
        for (key, before) in touched {
            let after = feed.rows[key]
            let beforeHeader = before.map(shape.sectionHeader) ?? []
            let afterHeader = after.map(shape.sectionHeader) ?? []
            if let before, after == nil || beforeHeader != afterHeader, !(sectioned && feed.sectionCounts[beforeHeader] == nil) {
                var identity = JSONOutput()
                shape.writeIdentity(before, to: &identity)
                ops.append(Self.op("remove", ("id", identity.bytes), sectioned ? ("section", beforeHeader) : nil))
            }
            guard let after else { continue }
            if made.contains(afterHeader) {
                madeRows[afterHeader, default: []].append(after)
            } else if before != after {
                var item = JSONOutput()
                shape.writeItem(after, to: &item)
                ops.append(Self.op("upsert", ("item", item.bytes), sectioned ? ("section", afterHeader) : nil))
            }
        }
        for (header, rows) in madeRows {
            var section = JSONOutput()
            Self.writeSection(header: header, rows: rows, shape: shape, to: &section)
            ops.append(Self.op("upsertSection", ("item", section.bytes)))
        }
        var body = Array("{\"ops\":[".utf8)
        for (index, op) in ops.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body += op
        }
        body += Array("]}".utf8)
        return body
    }

    /// Whether the transaction left the feed as it was (no op to send).
    func changesNothing(in feed: MadeFeed) -> Bool {
        touched.allSatisfy { feed.rows[$0.key] == $0.before }
    }

    /// `{"op":"<name>","<member>":<json>,...}`.
    private static func op(_ name: String, _ first: (String, [UInt8]), _ second: (String, [UInt8])? = nil) -> [UInt8] {
        var text = Array("{\"op\":\"\(name)\",\"\(first.0)\":".utf8) + first.1
        if let second { text += Array(",\"\(second.0)\":".utf8) + second.1 }
        text.append(UInt8(ascii: "}"))
        return text
    }

    /// Writes a section, `header` with `items`, the rows.
    static func writeSection(header: [UInt8], rows: [SourceRow], shape: ServedShape, to output: inout JSONOutput) {
        var written = Array(header.dropLast())
        written += Array(",\"items\":".utf8)
        var items = JSONOutput(capacity: 64 * rows.count)
        items.array(rows) { shape.writeItem($1, to: &$0) }
        written += items.bytes
        written.append(UInt8(ascii: "}"))
        output.value(text: written)
    }
}
