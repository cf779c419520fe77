import BatchDiffJSON

/// A sectioned feed's collection (``SectionedRows``) as a ``FeedPatch``'s ops change it, and
/// what each row and section the patch touches was before its first op, from which
/// ``SectionedPatchChange`` makes the batch and the changes of text, in time proportional
/// to what the patch names (and the rows of the sections it removes) times a logarithm.
struct PatchedSections {
    /// A row as it was before the patch: its section's identity and where it stood in it.
    struct RowBefore {
        let identity: Fingerprint
        let section: Fingerprint
        let placed: RowOrder.PlacedRow
    }

    /// A section as it was before the patch.
    struct SectionBefore {
        /// Its position, header content and whole text's length.
        let placed: RowOrder.PlacedRow
        /// Where its text started in the collection's.
        let offset: Int
        let rowCount: Int
        /// The length of its `items` array's text.
        let rowsTextCount: Int
        let prefix: ArraySlice<UInt8>
        let suffix: ArraySlice<UInt8>
    }

    /// A row where it stands now: its section's node and its own.
    struct RowKey: Hashable {
        let section: Int32
        let row: Int32
    }

    private(set) var rows: SectionedRows
    /// The text's length and the number of sections before the patch.
    let oldTextCount: Int
    let oldSectionCount: Int
    /// The rows the ops target that stood in the collection, and the sections they name,
    /// as they were, by identity.
    private(set) var rowsBefore: [Fingerprint: RowBefore] = [:]
    private(set) var sectionsBefore: [Fingerprint: SectionBefore] = [:]
    /// The rows the patch touched that stand now (changed, moved or added), with what they
    /// were before (`nil`: added).
    private(set) var touched: [RowKey: RowBefore?] = [:]
    /// The rows that stood before and no longer do (removed, or gone with their section),
    /// and the index of each whose identity was the collection's only one of it.
    private(set) var gone: [RowBefore?] = []
    private var goneByIdentity: [Fingerprint: Int] = [:]
    /// The identities of the sections the patch added.
    private(set) var addedSections: Set<Fingerprint> = []
    private let settings: FeedSettings
    /// Where rows go within their sections, and where sections go, when the feed is sorted.
    private let rowPlacement: KeyPlacement?
    private let sectionPlacement: KeyPlacement?
    private var opIndex = 0
    private var patchText: Int32 = 0

    /// `rows`, of a feed with `settings`, to be changed by `patch`.
    init(_ rows: consuming SectionedRows, settings: FeedSettings, patch: FeedPatch) {
        self.rows = rows
        self.settings = settings
        rowPlacement = settings.order.rows.map { KeyPlacement($0, parameter: "orderBy", idKey: settings.idKey) }
        sectionPlacement = settings.order.sections.map { KeyPlacement($0, parameter: "sectionOrderBy", idKey: settings.idKey) }
        oldTextCount = self.rows.textCount
        oldSectionCount = self.rows.order.count
        let targets = patch.targets(idKey: settings.idKey)
        var sections = targets.sections
        for identity in targets.rows {
            guard case .row(let section, let row) = self.rows.row(identity) else { continue }
            let sectionIdentity = self.rows.order.identity(of: section)
            rowsBefore[identity] = RowBefore(identity: identity, section: sectionIdentity, placed: self.rows[section].rows.placed(row))
            sections.insert(sectionIdentity)
        }
        for identity in sections {
            guard case .row(let node) = self.rows.order.row(identity) else { continue }
            let section = self.rows[node]
            sectionsBefore[identity] = SectionBefore(
                placed: self.rows.order.placed(node), offset: self.rows.offset(of: node), rowCount: section.rows.count,
                rowsTextCount: section.rows.textCount, prefix: section.prefix, suffix: section.suffix
            )
        }
    }

    /// Applies `patch`'s ops in order; ``FeedError/patchRefused(_:)`` for the first that
    /// cannot be applied (the collection is then to be dropped: it is part changed).
    mutating func apply(_ patch: FeedPatch) throws(FeedError) {
        patchText = rows.texts.add(patch.text)
        for (index, op) in patch.ops.enumerated() {
            opIndex = index
            switch op {
            case .upsert(let item, let section, let position): try upsert(item, in: section, at: position)
            case .merge(let id, let patch, let section): try merge(id, by: patch, in: section)
            case .remove(let id, let section): try remove(id, from: section)
            case .move(let id, let section, let position): try move(id, to: section, at: position)
            case .upsertSection(let item, let position): try upsertSection(item, at: position)
            case .removeSection(let id): try removeSection(id)
            case .moveSection(let id, let position):
                if let sectionPlacement { throw sectionPlacement.positionRefused("moveSection places a section, which an upsertSection of its new keys does", op: index) }
                let section = try section(id)
                rows.detach(section)
                try placeSection(section, at: position)
            }
        }
    }

    // MARK: Row ops

    private mutating func upsert(_ item: JSONValue, in sectionID: JSONValue?, at position: FeedPatch.Position?) throws(FeedError) {
        let section = try rowSection(sectionID)
        if let rowPlacement, position != nil { throw rowPlacement.positionRefused("an upsert takes no position", op: opIndex) }
        let identity = item.itemIdentity(idKey: settings.idKey)
        let location = location(of: item)
        if let row = try row(identity, named: item, in: section, required: false) {
            touch(RowKey(section: section, row: row), identity)
            rows.changeRows(of: section) { rows in rows.change(row, content: item.fingerprint, location: location) }
            if let position {
                rows.changeRows(of: section) { rows in rows.detach(row) }
                try placeRow(row, identity, in: section, at: position)
            }
            try placeRowByKey(row, in: section, named: item)
            return
        }
        if settings.uniqueIdentities, case .row(let other, _) = rows.row(identity) {
            throw refused(.duplicateIdentity, "the feed keeps its identities unique; \(FeedPatch.describe(item)) would repeat the identity of a row\(sectionName(other))")
        }
        let row = add(identity, content: item.fingerprint, location: location, to: section)
        if rowPlacement == nil { try placeRow(row, identity, in: section, at: position ?? .end) } else { try placeRowByKey(row, in: section, named: item, isPlaced: false) }
    }

    private mutating func merge(_ id: JSONValue, by patch: JSONValue, in sectionID: JSONValue?) throws(FeedError) {
        let section = try rowSection(sectionID)
        guard let row = try row(id.fingerprint, named: id, in: section, required: true) else { return }
        let current = rows.texts[rows[section].rows.location(of: row)]
        guard let merged = try MergedRow(current, merging: patch, identity: id.fingerprint, idKey: settings.idKey) else {
            throw refused(.invalidShape, MergedRow.changesIdentity(of: id, idKey: settings.idKey))
        }
        let location = rows.texts.add(row: merged.text)
        touch(RowKey(section: section, row: row), id.fingerprint)
        rows.changeRows(of: section) { rows in rows.change(row, content: merged.content, location: location) }
        try placeRowByKey(row, in: section, named: id)
    }

    private mutating func remove(_ id: JSONValue, from sectionID: JSONValue?) throws(FeedError) {
        let section = try rowSection(sectionID)
        guard let row = try row(id.fingerprint, named: id, in: section, required: true) else { return }
        take(RowKey(section: section, row: row), id.fingerprint)
    }

    private mutating func move(_ id: JSONValue, to sectionID: JSONValue?, at position: FeedPatch.Position) throws(FeedError) {
        let section = try rowSection(sectionID)
        if let rowPlacement { throw rowPlacement.positionRefused("move places a row, which an upsert of its new keys does", op: opIndex) }
        // Found in any section: the op names where it goes.
        guard case .row(let from, let row) = try lookUp(id.fingerprint, named: id) else {
            throw refused(.identityNotFound, "the feed has no row \(FeedPatch.describe(id))")
        }
        let key = RowKey(section: from, row: row)
        if from == section {
            touch(key, id.fingerprint)
            rows.changeRows(of: section) { rows in rows.detach(row) }
            try placeRow(row, id.fingerprint, in: section, at: position)
            return
        }
        // Into another section: a row of its own there, that was this one.
        let placed = rows[from].rows.placed(row)
        let before = touched.index(forKey: key).map { touched[$0].value } ?? rowsBefore[id.fingerprint]
        touched[key] = nil
        rows.changeRows(of: from) { rows in rows.remove(row) }
        rows.count(id.fingerprint, in: from, by: -1)
        let moved = rows.changeRows(of: section) { rows in
            rows.newRow(identity: id.fingerprint, content: placed.content, location: placed.location)
        }
        rows.count(id.fingerprint, in: section, by: 1)
        touched[RowKey(section: section, row: moved)] = before
        try placeRow(moved, id.fingerprint, in: section, at: position)
    }

    /// The section a row op works in: the one its `section` names.
    private func rowSection(_ sectionID: JSONValue?) throws(FeedError) -> Int32 {
        guard let sectionID else { throw refused(.invalidShape, "a row op on a sectioned feed names its \"section\"") }
        return try section(sectionID)
    }

    /// The row of `identity` (`named` in messages) in `section`: `nil` when there is none
    /// there and none is `required`; an identity that repeats in the feed is refused.
    private func row(_ identity: Fingerprint, named name: JSONValue, in section: Int32, required: Bool) throws(FeedError) -> Int32? {
        if case .row(section, let row) = try lookUp(identity, named: name) { return row }
        if required { throw refused(.identityNotFound, "the feed has no row \(FeedPatch.describe(name))\(sectionName(section))") }
        return nil
    }

    private func lookUp(_ identity: Fingerprint, named name: JSONValue) throws(FeedError) -> SectionedRows.RowLookup {
        let found = rows.row(identity)
        if found == .repeated { throw refused(.duplicateIdentity, "the identity \(FeedPatch.describe(name)) repeats in the feed; an op cannot name it") }
        return found
    }

    /// Puts `row` (of `identity`), in no position, into `section` at `position`.
    private mutating func placeRow(_ row: Int32, _ identity: Fingerprint, in section: Int32, at position: FeedPatch.Position) throws(FeedError) {
        let at: Int
        switch position {
        case .start: at = 0
        case .end: at = rows[section].rows.count
        case .before(let anchor): at = rows[section].rows.position(of: try rowAnchor(anchor, in: section, besides: identity))
        case .after(let anchor): at = rows[section].rows.position(of: try rowAnchor(anchor, in: section, besides: identity)) + 1
        }
        rows.changeRows(of: section) { rows in rows.insert(row, at: at) }
    }

    /// Puts `row` of `section` (in a position unless not `isPlaced`) where its keys put it
    /// among the section's rows, when they are sorted; `named` names it in refusals.
    private mutating func placeRowByKey(_ row: Int32, in section: Int32, named: JSONValue, isPlaced: Bool = true) throws(FeedError) {
        guard let rowPlacement else { return }
        let place = try rowPlacement.place(of: rows.texts[rows[section].rows.location(of: row)], named: "row \(FeedPatch.describe(named))", op: opIndex)
        if isPlaced { rows.changeRows(of: section) { rows in rows.detach(row) } }
        let position = try rowPlacement.position(of: place, among: rows[section].rows) { rows.texts[rows[section].rows.location(of: $0)] }
        rows.changeRows(of: section) { rows in rows.insert(row, at: position) }
    }

    private func rowAnchor(_ anchor: JSONValue, in section: Int32, besides identity: Fingerprint) throws(FeedError) -> Int32 {
        switch rows.row(anchor.fingerprint) {
        case .repeated: throw refused(.duplicateIdentity, "the anchor \(FeedPatch.describe(anchor)) repeats in the feed; an op cannot name it")
        case .row(section, let row) where anchor.fingerprint != identity: return row
        default:
            let itself = anchor.fingerprint == identity ? " (a row cannot stand beside itself)" : ""
            throw refused(.anchorNotFound, "no row \(FeedPatch.describe(anchor)) to stand beside\(sectionName(section))\(itself)")
        }
    }

    // MARK: Section ops

    private mutating func upsertSection(_ item: JSONValue, at position: FeedPatch.Position?) throws(FeedError) {
        let identity = item.sectionIdentity(idKey: settings.idKey)
        let items = item.member(named: "items")
        let (prefix, suffix) = item.sectionHeader
        if let sectionPlacement, position != nil { throw sectionPlacement.positionRefused("an upsertSection takes no position", op: opIndex) }
        if let section = try sectionNamed(identity, item, required: false) {
            guard items == nil else {
                throw refused(.invalidShape, "section \(FeedPatch.describe(item)) exists: upsertSection changes its header only, and may not carry \"items\" (row ops change them)")
            }
            rows.setHeader(of: section, prefix: prefix, suffix: suffix, content: item.headerContent)
            if let position {
                rows.detach(section)
                try placeSection(section, at: position)
            }
            try placeSectionByKey(section, named: item)
            return
        }
        guard items == nil || items!.isArray else { throw refused(.invalidShape, "a new section's \"items\" is an array, not \(items!.kindName)") }
        let section = rows.newSection(identity: identity, content: item.headerContent, prefix: prefix, suffix: suffix)
        addedSections.insert(identity)
        if sectionPlacement == nil { try placeSection(section, at: position ?? .end) } else { try placeSectionByKey(section, named: item, isPlaced: false) }
        for row in items?.elements ?? [] {
            let rowIdentity = row.itemIdentity(idKey: settings.idKey)
            if settings.uniqueIdentities && rows.rowIdentity(rowIdentity) != nil {
                throw refused(.duplicateIdentity, "the feed keeps its identities unique; the row \(FeedPatch.describe(row)) of the new section would repeat one")
            }
            let added = add(rowIdentity, content: row.fingerprint, location: location(of: row), to: section)
            if rowPlacement == nil { rows.changeRows(of: section) { rows in rows.insert(added, at: rows.count) } } else { try placeRowByKey(added, in: section, named: row, isPlaced: false) }
        }
    }

    private mutating func removeSection(_ id: JSONValue) throws(FeedError) {
        let node = try section(id)
        let identity = rows.order.identity(of: node)
        let section = rows.removeSection(node)
        // Its rows the patch did not touch stood where the rows it names did not: they fill
        // the other places, in order.
        let named = Set(rowsBefore.values.filter { $0.section == identity }.map(\.placed.position))
        var place = 0
        for row in section.rows.rowsInOrder() {
            let key = RowKey(section: node, row: row)
            let rowIdentity = section.rows.identity(of: row)
            if let entry = touched.removeValue(forKey: key) {
                if let before = entry { addGone(before, rowIdentity) }
            } else if let before = rowsBefore[rowIdentity], before.section == identity {
                addGone(before, rowIdentity)
            } else {
                while named.contains(place) { place += 1 }
                let placed = section.rows.placed(row)
                addGone(RowBefore(identity: rowIdentity, section: identity, placed: RowOrder.PlacedRow(position: place, content: placed.content, location: placed.location)), rowIdentity)
                place += 1
            }
        }
    }

    /// The section `id` names.
    private func section(_ id: JSONValue) throws(FeedError) -> Int32 {
        guard let section = try sectionNamed(id.fingerprint, id, required: true) else { throw .internalFailure("a required section") }
        return section
    }

    /// The section of `identity` (`named` in messages); a repeated one is refused.
    private func sectionNamed(_ identity: Fingerprint, _ name: JSONValue, required: Bool) throws(FeedError) -> Int32? {
        switch rows.order.row(identity) {
        case .repeated: throw refused(.duplicateIdentity, "the section identity \(FeedPatch.describe(name)) repeats in the feed; an op cannot name it")
        case .none where required: throw refused(.identityNotFound, "the feed has no section \(FeedPatch.describe(name))")
        case .none: return nil
        case .row(let section): return section
        }
    }

    private mutating func placeSection(_ section: Int32, at position: FeedPatch.Position) throws(FeedError) {
        let at: Int
        switch position {
        case .start: at = 0
        case .end: at = rows.order.count
        case .before(let anchor): at = rows.order.position(of: try sectionAnchor(anchor, besides: section))
        case .after(let anchor): at = rows.order.position(of: try sectionAnchor(anchor, besides: section)) + 1
        }
        rows.place(section, at: at)
    }

    /// Puts `section` (in a position unless not `isPlaced`) where its header's keys put it,
    /// when sections are sorted; `named` names it in refusals.
    private mutating func placeSectionByKey(_ section: Int32, named: JSONValue, isPlaced: Bool = true) throws(FeedError) {
        guard let sectionPlacement else { return }
        let place = try sectionPlacement.place(of: rows.headerText(of: section)[...], named: "section \(FeedPatch.describe(named))", op: opIndex)
        if isPlaced { rows.detach(section) }
        let position = try sectionPlacement.position(of: place, among: rows.order) { rows.headerText(of: $0)[...] }
        rows.place(section, at: position)
    }

    private func sectionAnchor(_ anchor: JSONValue, besides section: Int32) throws(FeedError) -> Int32 {
        switch rows.order.row(anchor.fingerprint) {
        case .repeated: throw refused(.duplicateIdentity, "the anchor section \(FeedPatch.describe(anchor)) repeats; an op cannot name it")
        case .row(let found) where found != section: return found
        case .row: throw refused(.anchorNotFound, "no section \(FeedPatch.describe(anchor)) to stand beside (a section cannot stand beside itself)")
        case .none: throw refused(.anchorNotFound, "no section \(FeedPatch.describe(anchor)) to stand beside")
        }
    }

    // MARK: What the patch touched

    private func location(of item: JSONValue) -> RowOrder.TextLocation {
        RowOrder.TextLocation(text: patchText, start: Int32(item.span.lowerBound), count: Int32(item.span.count))
    }

    /// Notes that the row `key` (of `identity`) is touched, with what it was before.
    private mutating func touch(_ key: RowKey, _ identity: Fingerprint) {
        if touched.index(forKey: key) == nil { touched[key] = rowsBefore[identity] }
    }

    /// A new row of `identity` in `section`, in no position yet: what it was before when the
    /// collection's only row of that identity is gone (the same row, come back).
    private mutating func add(_ identity: Fingerprint, content: Fingerprint, location: RowOrder.TextLocation, to section: Int32) -> Int32 {
        let row = rows.changeRows(of: section) { rows in rows.newRow(identity: identity, content: content, location: location) }
        rows.count(identity, in: section, by: 1)
        var before: RowBefore?
        if let index = goneByIdentity.removeValue(forKey: identity) {
            before = gone[index]
            gone[index] = nil
        }
        touched[RowKey(section: section, row: row)] = before
        return row
    }

    /// Takes the row `key` (of `identity`) out for good.
    private mutating func take(_ key: RowKey, _ identity: Fingerprint) {
        let before = touched.index(forKey: key).map { touched[$0].value } ?? rowsBefore[identity]
        touched[key] = nil
        rows.changeRows(of: key.section) { rows in rows.remove(key.row) }
        rows.count(identity, in: key.section, by: -1)
        if let before { addGone(before, identity) }
    }

    /// Notes that a row that stood before is gone; one the ops target can come back.
    private mutating func addGone(_ before: RowBefore, _ identity: Fingerprint) {
        gone.append(before)
        if rowsBefore[identity] != nil { goneByIdentity[identity] = gone.count - 1 }
    }

    // MARK: Messages

    private func refused(_ reason: PatchRefusal.Reason, _ detail: String) -> FeedError {
        .patchRefused(PatchRefusal(reason, op: opIndex, detail))
    }

    /// " in section <identity>".
    private func sectionName(_ section: Int32) -> String {
        let value = try? JSONDocument(bytes: rows.headerText(of: section)).root
        return " in section " + (value.map { FeedPatch.describe($0.member(named: settings.idKey) ?? $0) } ?? "?")
    }
}
