import BatchDiffFeeds
import BatchDiffJSON

/// A feed a shape made (docs/sources.md §4): the rows it holds, by key, as the follower
/// last wrote them, and, until the stream passes it, where its first version stands
/// (``SnapshotHorizon``).
struct MadeFeed: Sendable {
    let id: FeedID
    /// The shape's index among the served shapes.
    let shape: Int
    let placeholderValues: [String]
    var rows: [[UInt8]: SourceRow] = [:]
    /// Rows per section header (a shape with `sectionBy`).
    var sectionCounts: [[UInt8]: Int] = [:]
    var horizon: SnapshotHorizon?
    /// When a client last read it (``SourceSettings/idle``).
    var lastRead: ContinuousClock.Instant

    /// Puts `row` (`nil`: removes the row of `key`), keeping the section counts.
    mutating func set(_ key: [UInt8], to row: SourceRow?, shape: ServedShape) {
        let old = row == nil ? rows.removeValue(forKey: key) : rows.updateValue(row!, forKey: key)
        guard shape.section != nil else { return }
        if let old {
            let header = shape.sectionHeader(of: old)
            sectionCounts[header, default: 0] -= 1
            if sectionCounts[header] == 0 { sectionCounts[header] = nil }
        }
        if let row { sectionCounts[shape.sectionHeader(of: row), default: 0] += 1 }
    }

    /// The same feed, its shape now at `index` among the served shapes (the shapes file
    /// read again, the shape unchanged).
    func moved(toShape index: Int) -> MadeFeed {
        var moved = MadeFeed(id: id, shape: index, placeholderValues: placeholderValues, horizon: horizon, lastRead: lastRead)
        moved.rows = rows
        moved.sectionCounts = sectionCounts
        return moved
    }

    /// The feed's collection as a `PUT` writes it: its rows (in no order: the feed sorts
    /// them), in sections when the shape has them.
    func collectionText(shape: ServedShape) -> [UInt8] {
        var output = JSONOutput(capacity: 64 * rows.count + 16)
        guard shape.section != nil else {
            output.array(rows.values) { shape.writeItem($1, to: &$0) }
            return output.bytes
        }
        var bySection: [[UInt8]: [SourceRow]] = [:]
        for row in rows.values { bySection[shape.sectionHeader(of: row), default: []].append(row) }
        output.object { output in
            output.key("sections")
            output.array(bySection) { output, section in
                FeedEdit.writeSection(header: section.key, rows: section.value, shape: shape, to: &output)
            }
        }
        return output.bytes
    }
}
