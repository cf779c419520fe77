import BatchDiff
import BatchDiffJSON

/// The JSON answers of feed routes, written in one place.
enum FeedAnswers {
    /// The answer to a `PUT`: `{"feed","version","changed", ...batch}`.
    static func write(feed: String, version: Int, changed: Bool, batch: JSONBatch) -> [UInt8] {
        var output = JSONOutput()
        output.raw("{\"feed\":")
        output.string(feed)
        output.raw(",\"version\":")
        output.integer(version)
        output.raw(",\"changed\":")
        output.bool(changed)
        output.raw(",")
        output.batchMembers(batch)
        output.raw("}")
        return output.bytes
    }

    /// The answer to `GET /feeds/{id}`: `{"feed","version","data"}`.
    static func latest(feed: String, snapshot: Snapshot) -> [UInt8] {
        var output = JSONOutput(capacity: snapshot.bytes.count + 64)
        output.raw("{\"feed\":")
        output.string(feed)
        output.raw(",\"version\":")
        output.integer(snapshot.version)
        output.raw(",\"data\":")
        output.raw(snapshot.bytes)
        output.raw("}")
        return output.bytes
    }

    /// The answer to `GET /feeds`: `{"feeds":[{"feed","version"}, ...]}`.
    static func list(_ feeds: [FeedSummary]) -> [UInt8] {
        var output = JSONOutput()
        output.raw("{\"feeds\":")
        output.array(feeds) { output, feed in
            output.raw("{\"feed\":")
            output.string(feed.id.name)
            output.raw(",\"version\":")
            output.integer(feed.version)
            output.raw("}")
        }
        output.raw("}")
        return output.bytes
    }

    /// The answer to `changes?since=`: `{"feed","from","to", ...batch, "values"}`, where
    /// `values` holds the content a client needs with the batch to rebuild `latest` from
    /// version `from`, aligned one-to-one with the batch's index lists.
    static func changes(feed: String, from: Int, latest: Snapshot, batch: JSONBatch) throws(FeedError) -> [UInt8] {
        var output = JSONOutput(capacity: 1024)
        output.raw("{\"feed\":")
        output.string(feed)
        output.raw(",\"from\":")
        output.integer(from)
        output.raw(",\"to\":")
        output.integer(latest.version)
        output.raw(",")
        output.batchMembers(batch)
        output.raw(",\"values\":{")
        do {
            try values(of: batch, from: latest, into: &output)
        } catch {
            throw .internalFailure("feed \(feed): the values of the batch from \(from) to \(latest.version): \(error)")
        }
        output.raw("}}")
        return output.bytes
    }

    private static func values(of batch: JSONBatch, from latest: Snapshot, into output: inout JSONOutput) throws {
        let text = latest.bytes
        func rows(_ inserted: [JSONItem], _ reloaded: [JSONItem]) {
            output.raw("\"rows\":{\"inserted\":")
            output.array(inserted) { output, item in output.raw(text[item.span]) }
            output.raw(",\"reloaded\":")
            output.array(reloaded) { output, item in output.raw(text[item.span]) }
            output.raw("}")
        }
        switch (batch, latest.collection) {
        case (.list(let batch), .list(let items)):
            let values = try batch.values(from: items)
            rows(values.insertedRows, values.reloadedRows)
        case (.sectioned(let batch), .sectioned(let sections)):
            let values = try batch.values(from: sections)
            rows(values.insertedRows, values.reloadedRows)
            output.raw(",\"sections\":{\"inserted\":")
            output.array(values.insertedSections) { output, section in output.raw(text[section.header.span]) }
            output.raw(",\"updated\":")
            // A header is its section's text read again without the items.
            let headers = try values.updatedHeaders.map { try JSONDocument(bytes: Array(text[$0.span])).root }
            output.array(headers) { output, section in output.object(section, without: "items") }
            output.raw("}")
        default:
            throw FeedError.internalFailure("a batch of another shape than the feed")
        }
    }
}
