import BatchDiff
import BatchDiffJSON

/// The latest version of a feed, whole: its JSON text and the collection read from it.
struct Snapshot {
    let version: Int
    let bytes: [UInt8]
    let collection: JSONCollection
    /// The fingerprint of the whole text's canonical form: equal snapshots make no version.
    let fingerprint: Fingerprint

    var byteEstimate: Int {
        switch collection {
        case .list(let items): bytes.count + items.count * 40
        case .sectioned(let sections): bytes.count + sections.reduce(0) { $0 + 48 + $1.items.count * 40 }
        }
    }

    /// The empty collection of the same shape (what version 0 means).
    var empty: JSONCollection {
        switch collection {
        case .list: .list([])
        case .sectioned: .sectioned([])
        }
    }
}

extension JSONOutput {
    /// Appends `"values":{…}`: the content a client needs with `batch` to rebuild `snapshot`
    /// from the old version, aligned one-to-one with the batch's index lists.
    mutating func values(of batch: JSONBatch, from snapshot: Snapshot) {
        let text = snapshot.bytes
        let rows = { (output: inout JSONOutput, inserted: [JSONItem], reloaded: [JSONItem]) in
            output.raw("\"rows\":{\"inserted\":")
            output.array(inserted) { output, item in output.raw(text[item.span]) }
            output.raw(",\"reloaded\":")
            output.array(reloaded) { output, item in output.raw(text[item.span]) }
            output.raw("}")
        }
        // The batch was made from the snapshot's collection, so its values are there.
        switch (batch, snapshot.collection) {
        case (.list(let batch), .list(let items)):
            let values = try! batch.values(from: items)
            raw("\"values\":{")
            rows(&self, values.insertedRows, values.reloadedRows)
            raw("}")
        case (.sectioned(let batch), .sectioned(let sections)):
            let values = try! batch.values(from: sections)
            raw("\"values\":{")
            rows(&self, values.insertedRows, values.reloadedRows)
            raw(",\"sections\":{\"inserted\":")
            array(values.insertedSections) { output, section in output.raw(text[section.header.span]) }
            raw(",\"updated\":")
            array(values.updatedHeaders) { output, header in
                // A section's own text, read again to leave its items out.
                let section = try! JSONDocument(bytes: Array(text[header.span])).root
                output.object(section, without: "items")
            }
            raw("}}")
        default:
            preconditionFailure("a feed keeps its shape")
        }
    }
}
