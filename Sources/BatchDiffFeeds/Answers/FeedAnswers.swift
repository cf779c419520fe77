import BatchDiff
import BatchDiffJSON

/// The JSON answers of feed routes, written in one place.
enum FeedAnswers {
    /// The answer to a `PUT`: `{"feed","version","changed", ...batch}`, the batch as
    /// `options` ask for it (docs/batch-format.md §6, §7).
    static func write(
        feed: String, version: Int, changed: Bool, batch: JSONBatch, options: AnswerOptions = AnswerOptions(),
        changedMembers: ChangedMembers? = nil
    ) throws(FeedError) -> [UInt8] {
        var output = JSONOutput()
        do {
            try output.object { output in
                output.key("feed")
                output.string(feed)
                output.key("version")
                output.integer(version)
                output.key("changed")
                output.bool(changed)
                try output.batchMembers(batch, options: options, changedMembers: changedMembers)
            }
        } catch {
            throw .internalFailure("feed \(feed): the answer to the write of version \(version): \(error)")
        }
        return output.bytes
    }

    /// The answer to `GET /feeds/{id}`: `{"feed","version","data"}`.
    static func latest(feed: String, snapshot: Snapshot) -> [UInt8] {
        var output = JSONOutput(capacity: snapshot.bytes.count + 64)
        output.object { output in
            output.key("feed")
            output.string(feed)
            output.key("version")
            output.integer(snapshot.version)
            output.key("data")
            output.value(text: snapshot.bytes)
        }
        return output.bytes
    }

    /// The size of ``latest(feed:snapshot:)``'s answer: a feed id needs no escapes.
    static func latestByteCount(feed: String, snapshot: Snapshot) -> Int {
        #"{"feed":"","version":,"data":}"#.utf8.count + feed.utf8.count + String(snapshot.version).utf8.count + snapshot.textCount
    }

    /// The answer to `GET /feeds`: `{"feeds":[{"feed","version"}, ...], "next"}`, `next`
    /// (the id to list after) only while more feeds follow.
    static func list(_ page: FeedPage) -> [UInt8] {
        var output = JSONOutput()
        output.object { output in
            output.key("feeds")
            output.array(page.feeds) { output, feed in
                output.object { output in
                    output.key("feed")
                    output.string(feed.id.name)
                    output.key("version")
                    output.integer(feed.version)
                }
            }
            if page.more, let last = page.feeds.last {
                output.key("next")
                output.string(last.id.name)
            }
        }
        return output.bytes
    }

    /// The answer to `changes?since=` as computed once for every client (``ComputedAnswer``):
    /// the answer in full (``changes(feed:from:latest:batch:format:changedMembers:)``, or
    /// `patch`, the JSON Patch, of that `mediaType`), and the reload that clients whose
    /// `maxChanges` the batch passes get instead.
    static func computed(
        feed: String, from: Int, latest: Snapshot, batch: JSONBatch, full: [UInt8], mediaType: AnswerMediaType = .json,
        changedMembers: ChangedMembers? = nil, merge: MergeValues? = nil
    ) -> ComputedAnswer {
        let counts = BatchCounts(batch)
        return ComputedAnswer(
            full: full, mediaType: mediaType, operationCount: batch.operationCount, batch: batch, changedMembers: changedMembers, merge: merge
        ) {
            reload(feed: feed, from: from, latest: latest, counts: counts)
        }
    }

    /// The answer to `changes?since=`: `{"feed","from","to", ...batch, "values"}`, where
    /// `values` holds the content a client needs with the batch to rebuild `latest` from
    /// version `from`, aligned one-to-one with the batch's index lists: `values` when given
    /// (read already, with merge entries: ``values(of:from:mergingFrom:)``), else read from
    /// `latest`. In the steps format, `{"feed","from","to","steps","counts"}`, insert and
    /// change steps carrying their new elements. (`maxChanges` is applied after:
    /// ``reload(feed:from:latest:counts:)``.)
    static func changes(
        feed: String, from: Int, latest: Snapshot, batch: JSONBatch, format: AnswerOptions.Format = .batch,
        changedMembers: ChangedMembers? = nil, values given: ValueTexts? = nil
    ) throws(FeedError) -> [UInt8] {
        var output = JSONOutput(capacity: 1024)
        do {
            try output.object { output in
                members(feed: feed, from: from, to: latest.version, into: &output)
                if format == .steps {
                    let elements = FlatElements(latest)
                    try output.stepsMembers(batch, values: { output, position in try elements.write(position, into: &output) }, changedMembers: changedMembers)
                } else {
                    try batchMembers(batch, values: given ?? values(of: batch, from: latest), changedMembers: changedMembers, into: &output)
                }
            }
        } catch {
            throw .internalFailure("feed \(feed): the values of the batch from \(from) to \(latest.version): \(error)")
        }
        return output.bytes
    }

    /// The answer to `changes?since=` for a client whose `maxChanges` the batch passes:
    /// `{"feed","from","to","reload":true,"counts","data"}`, `data` the whole latest collection.
    static func reload(feed: String, from: Int, latest: Snapshot, counts: BatchCounts) -> [UInt8] {
        var output = JSONOutput(capacity: latest.bytes.count + 256)
        output.object { output in
            members(feed: feed, from: from, to: latest.version, into: &output)
            output.reloadMembers(counts)
            output.key("data")
            output.value(text: latest.bytes)
        }
        return output.bytes
    }

    /// The answer to a window's `changes` (docs/feeds.md §5.3): `{"feed","from","to","offset",
    /// ...batch, "values", "total"}`, the window's batch (its `counts` the window's) and
    /// `total` the collection's rows (sections), old and new; in the steps `format`,
    /// `"steps"` instead of the batch and its values. Its reload (past `maxChanges`) carries
    /// the new window as `data`.
    static func window(_ content: WindowContent, feed: String, from: Int, to: Int, offset: Int, format: AnswerOptions.Format) throws(FeedError) -> ComputedAnswer {
        let total = content.total
        @Sendable func write(_ members: (inout JSONOutput) throws -> Void) rethrows -> [UInt8] {
            var output = JSONOutput(capacity: 1024)
            try output.object { output in
                Self.members(feed: feed, from: from, to: to, into: &output)
                output.key("offset")
                output.integer(offset)
                try members(&output)
                output.key("total")
                output.object { output in
                    output.key("old")
                    output.integer(total.old)
                    output.key("new")
                    output.integer(total.new)
                }
            }
            return output.bytes
        }
        // The reload is written for the clients that need one, from the window's data (held
        // with the answer, and counted).
        let (batch, data) = (content.batch, content.data)
        let reload: @Sendable () -> [UInt8] = {
            write { output in
                output.reloadMembers(batch)
                output.key("data")
                output.value(text: data)
            }
        }
        do {
            if format == .jsonPatch {
                var output = JSONOutput(capacity: 256)
                switch content.batch {
                case .list(let batch):
                    // The bare patch of the window's rows (a list needs nothing of the old side).
                    try output.jsonPatch(batch) { content.flat[$0] }
                case .sectioned(let batch):
                    // A sectioned window's sections are replaced whole when anything in them
                    // changed: its old headers' texts, which name their changed members, are
                    // not read (docs/feeds.md §5.3).
                    output.array(batch.isEmpty ? [] : [content.sections]) { output, sections in
                        output.object { output in
                            output.key("op")
                            output.string("replace")
                            output.key("path")
                            output.string("/sections")
                            output.key("value")
                            output.array(sections) { output, section in output.value(text: section) }
                        }
                    }
                }
                return ComputedAnswer(
                    full: output.bytes, mediaType: .jsonPatch, operationCount: content.batch.operationCount, total: content.total,
                    holding: data.count, makeReload: reload
                )
            }
            let full = try write { output in
                if format == .steps {
                    try output.stepsMembers(
                        content.batch, values: { output, position in output.value(text: content.flat[position]) }, changedMembers: content.changedMembers
                    )
                } else {
                    try batchMembers(content.batch, values: content.values, changedMembers: content.changedMembers, into: &output)
                }
            }
            return ComputedAnswer(full: full, operationCount: content.batch.operationCount, total: content.total, holding: data.count, makeReload: reload)
        } catch {
            throw .internalFailure("feed \(feed): the window's batch from \(from) to \(to): \(error)")
        }
    }

    /// `"feed","from","to"`, the members every `changes` answer begins with.
    private static func members(feed: String, from: Int, to: Int, into output: inout JSONOutput) {
        output.key("feed")
        output.string(feed)
        output.key("from")
        output.integer(from)
        output.key("to")
        output.integer(to)
    }

    /// The answer to `changes?since=&format=json-patch`: the bare RFC 6902 patch from the
    /// client's version (`old`, its collection and text; empty for version 0) to `latest`.
    static func patch(
        _ batch: JSONBatch, from old: (collection: JSONCollection, text: [UInt8]), to latest: Snapshot, idKey: String
    ) throws(FeedError) -> [UInt8] {
        do {
            // Version 0 is the empty collection of the feed's shape.
            let empty = switch latest.collection {
            case .list: "[]"
            case .sectioned: #"{"sections":[]}"#
            }
            let oldText = old.text.isEmpty ? Array(empty.utf8) : old.text
            let sides = (
                PatchSide(collection: old.collection, text: old.text, value: try JSONDocument(bytes: oldText, collections: .root, idKey: idKey).root),
                PatchSide(collection: latest.collection, text: latest.bytes, value: try JSONDocument(bytes: latest.bytes, collections: .root, idKey: idKey).root)
            )
            var output = JSONOutput(capacity: 1024)
            try output.jsonPatch(batch, from: sides.0, to: sides.1)
            return output.bytes
        } catch {
            throw .internalFailure("the JSON Patch to version \(latest.version): \(error)")
        }
    }

    /// The answer to `changes?since=` from version `from` to `to`, in the batch format
    /// without changed members, `batch` with the texts of its `values`: what
    /// ``changes(feed:from:latest:batch:format:changedMembers:)`` writes, from what a patch
    /// knows without the whole latest text.
    static func changes(feed: String, from: Int, to: Int, batch: JSONBatch, values: ValueTexts) throws(FeedError) -> [UInt8] {
        var output = JSONOutput(capacity: 1024)
        do {
            try output.object { output in
                members(feed: feed, from: from, to: to, into: &output)
                try batchMembers(batch, values: values, changedMembers: nil, into: &output)
            }
        } catch {
            throw .internalFailure("feed \(feed): the values of the batch from \(from) to \(to): \(error)")
        }
        return output.bytes
    }

    /// The batch's members and `values`, `{"rows": {"inserted", "reloaded"}}` and for a
    /// sectioned batch `"sections": {"inserted", "updated"}`, led by `"form": "merge"` when
    /// its entries are merge entries (docs/batch-format.md §6).
    private static func batchMembers(
        _ batch: JSONBatch, values: ValueTexts, changedMembers: ChangedMembers?, into output: inout JSONOutput
    ) throws {
        output.batchMembers(batch, changedMembers: changedMembers)
        output.key("values")
        try output.object { output in
            if values.merge != nil {
                // Says what the entries are: a client cannot tell a merge entry from a
                // whole row that happens to read `{"merge": …}`.
                output.key("form")
                output.string("merge")
            }
            output.key("rows")
            output.object { output in
                output.key("inserted")
                output.array(values.insertedRows) { output, text in output.value(text: text) }
                output.key("reloaded")
                if let merge = values.merge {
                    output.array(merge.rows) { output, entry in output.value(text: entry) }
                } else {
                    output.array(values.reloadedRows) { output, text in output.value(text: text) }
                }
            }
            guard case .sectioned = batch else { return }
            output.key("sections")
            try output.object { output in
                output.key("inserted")
                output.array(values.insertedSections) { output, text in output.value(text: text) }
                output.key("updated")
                if let merge = values.merge {
                    output.array(merge.sections) { output, entry in output.value(text: entry) }
                } else {
                    try output.array(values.updatedSections) { output, text in try output.header(text) }
                }
            }
        }
    }

    /// The texts of `batch`'s values, from `latest`'s text; given `old`, the version the
    /// batch starts from (its collection and the text it was read from), with the merge
    /// entries that take its rows and headers to them (`values=merge`), made from the texts
    /// read here and the old rows they pair with, without placing the batch again.
    static func values(
        of batch: JSONBatch, from latest: Snapshot, mergingFrom old: (collection: JSONCollection, text: [UInt8])?
    ) throws(FeedError) -> ValueTexts {
        do {
            var values = try values(of: batch, from: latest)
            if let old {
                values.merge = try MergeValues(
                    of: batch, old: old.collection, oldText: old.text, newRows: values.reloadedRows, newSections: values.updatedSections
                )
            }
            return values
        } catch {
            throw error as? FeedError ?? .internalFailure("the merge values of a batch: \(error)")
        }
    }

    /// The texts of `batch`'s values, from `latest`'s text.
    private static func values(of batch: JSONBatch, from latest: Snapshot) throws -> ValueTexts {
        let text = latest.bytes
        switch (batch, latest.collection) {
        case (.list(let batch), .list(let items)):
            let values = try batch.values(from: items)
            return ValueTexts(insertedRows: values.insertedRows.map { text[$0.span] }, reloadedRows: values.reloadedRows.map { text[$0.span] })
        case (.sectioned(let batch), .sectioned(let sections)):
            let values = try batch.values(from: sections.flat)
            // A section's header spans the whole section's text.
            return ValueTexts(
                insertedRows: values.insertedRows.map { text[$0.span] }, reloadedRows: values.reloadedRows.map { text[$0.span] },
                insertedSections: values.insertedHeaders.map { text[$0.span] }, updatedSections: values.updatedHeaders.map { text[$0.span] }
            )
        default:
            throw FeedError.internalFailure("a batch of another shape than the feed")
        }
    }
}

/// The elements of a snapshot's flat list, as an adapter shows it (docs/batch-format.md
/// §7): a list's items, or each section's header (its object without `items`) followed by
/// its items; written by position.
private struct FlatElements {
    let text: [UInt8]
    let collection: JSONCollection
    /// For a sectioned snapshot, where each section's header stands in the flat list.
    let starts: [Int]

    init(_ snapshot: Snapshot) {
        text = snapshot.bytes
        collection = snapshot.collection
        var starts: [Int] = []
        if case .sectioned(let sections) = collection {
            var position = 0
            for section in sections {
                starts.append(position)
                position += 1 + section.items.count
            }
        }
        self.starts = starts
    }

    /// Writes the element at flat position `position`.
    func write(_ position: Int, into output: inout JSONOutput) throws {
        switch collection {
        case .list(let items):
            output.value(text: text[items[position].span])
        case .sectioned(let sections):
            // The last section whose header stands at or before the position.
            var low = 0
            var high = starts.count - 1
            while low < high {
                let middle = (low + high + 1) / 2
                if starts[middle] <= position { low = middle } else { high = middle - 1 }
            }
            let section = sections[low]
            if position == starts[low] {
                try output.header(text[section.header.span])
            } else {
                output.value(text: text[section.items[position - starts[low] - 1].span])
            }
        }
    }
}

extension JSONOutput {
    /// Appends a section's header as a client gets it: the section's `text` read again,
    /// without its `items`.
    fileprivate mutating func header(_ text: ArraySlice<UInt8>) throws {
        object(try JSONDocument(bytes: Array(text)).root, without: "items")
    }
}
