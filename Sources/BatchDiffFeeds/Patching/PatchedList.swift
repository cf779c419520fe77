import BatchDiffJSON

/// A list feed's rows (``ListRows``) as a ``FeedPatch``'s ops change them, and what each
/// row the patch names was before its first op, from which ``ListPatchChange`` makes the
/// batch and the changes of text, in time proportional to the rows named times a logarithm.
struct PatchedList {
    private(set) var rows: ListRows
    var order: RowOrder { rows.order }
    /// The rows the patch names that stood in the list before it, by identity.
    private(set) var before: [Fingerprint: RowOrder.PlacedRow] = [:]
    /// The identities of rows the patch added that the list did not have.
    private(set) var added: Set<Fingerprint> = []
    /// The rows and the text's length before the patch.
    let oldCount: Int
    let oldTextCount: Int
    private let idKey: String
    /// Where rows go when the feed is sorted.
    private let placement: KeyPlacement?
    /// The index of the op being applied, for refusals.
    private var opIndex = 0

    /// The rows `rows`, of a feed with `settings`, to be changed by `patch`.
    init(_ rows: consuming ListRows, settings: FeedSettings, patch: FeedPatch) {
        self.rows = rows
        let order = self.rows.order
        let idKey = settings.idKey
        self.idKey = idKey
        placement = settings.order.rows.map { KeyPlacement($0, parameter: "orderBy", idKey: idKey) }
        oldCount = order.count
        oldTextCount = order.textCount
        for identity in patch.targets(idKey: idKey).rows {
            guard case .row(let row) = order.row(identity) else { continue }
            before[identity] = order.placed(row)
        }
    }

    /// Applies `patch`'s ops in order; ``FeedError/patchRefused(_:)`` for the first that
    /// cannot be applied (the rows are then to be dropped: they are part changed).
    mutating func apply(_ patch: FeedPatch) throws(FeedError) {
        let text = rows.texts.add(patch.text)
        for (index, op) in patch.ops.enumerated() {
            opIndex = index
            switch op {
            case .upsert(let item, let section, let position):
                try refuseSection(section)
                let identity = item.itemIdentity(idKey: idKey)
                let span = item.span
                let location = RowOrder.TextLocation(text: text, start: Int32(span.lowerBound), count: Int32(span.count))
                if let placement, position != nil { throw placement.positionRefused("an upsert takes no position", op: index) }
                if let row = try row(identity, named: item, required: false) {
                    rows.order.change(row, content: item.fingerprint, location: location)
                    if let position {
                        rows.order.detach(row)
                        try place(row, at: position)
                    }
                    try placeByKey(row, named: item)
                } else {
                    if before[identity] == nil { added.insert(identity) }
                    let row = rows.order.newRow(identity: identity, content: item.fingerprint, location: location)
                    if placement == nil { try place(row, at: position ?? .end) } else { try placeByKey(row, named: item, isPlaced: false) }
                }
            case .merge(let id, let patch, let section):
                try refuseSection(section)
                if let row = try row(id.fingerprint, named: id, required: true) {
                    guard let merged = try MergedRow(rows.texts[order.location(of: row)], merging: patch, identity: id.fingerprint, idKey: idKey) else {
                        throw refused(.invalidShape, MergedRow.changesIdentity(of: id, idKey: idKey))
                    }
                    rows.order.change(row, content: merged.content, location: rows.texts.add(row: merged.text))
                    try placeByKey(row, named: id)
                }
            case .remove(let id, let section):
                try refuseSection(section)
                if let row = try row(id.fingerprint, named: id, required: true) { rows.order.remove(row) }
            case .move(let id, let section, let position):
                try refuseSection(section)
                if let placement { throw placement.positionRefused("move places a row, which an upsert of its new keys does", op: index) }
                if let row = try row(id.fingerprint, named: id, required: true) {
                    rows.order.detach(row)
                    try place(row, at: position)
                }
            case .upsertSection: throw refused(.invalidShape, "a list feed has no sections; upsertSection is for sectioned feeds")
            case .removeSection: throw refused(.invalidShape, "a list feed has no sections; removeSection is for sectioned feeds")
            case .moveSection: throw refused(.invalidShape, "a list feed has no sections; moveSection is for sectioned feeds")
            }
        }
    }

    private func refuseSection(_ section: JSONValue?) throws(FeedError) {
        guard section == nil else { throw refused(.invalidShape, "a list feed has no sections; a row op on it takes no \"section\"") }
    }

    /// The row of `identity` (`named` in messages): `nil` when there is none and none is
    /// `required`; an identity that repeats in the feed is refused.
    private func row(_ identity: Fingerprint, named name: JSONValue, required: Bool) throws(FeedError) -> Int32? {
        switch order.row(identity) {
        case .repeated: throw refused(.duplicateIdentity, "the identity \(FeedPatch.describe(name)) repeats in the feed; an op cannot name it")
        case .none where required: throw refused(.identityNotFound, "the feed has no row \(FeedPatch.describe(name))")
        case .none: return nil
        case .row(let row): return row
        }
    }

    /// Puts `row`, in no position, at `position`.
    private mutating func place(_ row: Int32, at position: FeedPatch.Position) throws(FeedError) {
        switch position {
        case .start: rows.order.insert(row, at: 0)
        case .end: rows.order.insert(row, at: order.count)
        case .before(let anchor): rows.order.insert(row, at: order.position(of: try self.anchor(anchor, besides: row)))
        case .after(let anchor): rows.order.insert(row, at: order.position(of: try self.anchor(anchor, besides: row)) + 1)
        }
    }

    /// Puts `row` (in a position unless not `isPlaced`) where its keys put it, when the feed
    /// is sorted; `named` names it in refusals.
    private mutating func placeByKey(_ row: Int32, named: JSONValue, isPlaced: Bool = true) throws(FeedError) {
        guard let placement else { return }
        let place = try placement.place(of: rows.texts[order.location(of: row)], named: "row \(FeedPatch.describe(named))", op: opIndex)
        if isPlaced { rows.order.detach(row) }
        let position = try placement.position(of: place, among: order) { rows.texts[order.location(of: $0)] }
        rows.order.insert(row, at: position)
    }

    private func anchor(_ anchor: JSONValue, besides row: Int32) throws(FeedError) -> Int32 {
        switch order.row(anchor.fingerprint) {
        case .repeated: throw refused(.duplicateIdentity, "the anchor \(FeedPatch.describe(anchor)) repeats in the feed; an op cannot name it")
        case .row(let found) where found != row: return found
        case .row: throw refused(.anchorNotFound, "no row \(FeedPatch.describe(anchor)) to stand beside (a row cannot stand beside itself)")
        case .none: throw refused(.anchorNotFound, "no row \(FeedPatch.describe(anchor)) to stand beside")
        }
    }

    private func refused(_ reason: PatchRefusal.Reason, _ detail: String) -> FeedError {
        .patchRefused(PatchRefusal(reason, op: opIndex, detail))
    }
}
