import BatchDiff

extension DiffableSnapshot {
    /// Fills an empty snapshot with `collection`: its sections at once, then each section's
    /// items with one `appendItems`. Throws when two rows (or sections) share an identifier,
    /// which a snapshot refuses (it traps).
    public mutating func append<Header, Item>(
        _ collection: FeedCollection<Header, Item>, identifiers: DiffableIdentifiers<Header, Item, SectionIdentifierType, ItemIdentifierType>
    ) throws(RepeatedIdentifierError) {
        let named = identifiers.identifiers(of: collection)
        try Self.checkUnique(named)
        append(named)
    }

    /// Changes this snapshot, which shows the collection `update` starts from, into one of
    /// `new`, the collection it leads to, operation by operation as the batch says: sections
    /// and rows deleted, inserted after (or before) their new neighbours (an inserted section
    /// with its rows in one `appendItems`), moved likewise, and rows whose content changed
    /// reconfigured (kept, their cells updated in place) or, where `rebuilding` says a cell
    /// must be rebuilt, reloaded. Returns the sections whose headers changed (the app
    /// refreshes those header views in place: a snapshot cannot reconfigure a header, and
    /// reloading the section would rebuild every cell in it).
    ///
    /// A reload, or a snapshot that does not show what the update starts from (its counts
    /// or identifiers differ from what the batch needs), is filled again whole: the data
    /// source still animates by identifier, so no row flashes that stayed. Throws, changing nothing, when `new` holds two rows (or
    /// sections) of one identifier: show such a feed with `performBatchUpdates`, or create
    /// it with `uniqueIdentities=true`.
    @discardableResult
    public mutating func apply<Header, Item>(
        _ update: BatchUpdate, to new: FeedCollection<Header, Item>,
        identifiers: DiffableIdentifiers<Header, Item, SectionIdentifierType, ItemIdentifierType>,
        rebuilding: (ItemIdentifierType) -> Bool = { _ in false }
    ) throws(RepeatedIdentifierError) -> [SectionIdentifierType] {
        let named = identifiers.identifiers(of: new)
        try Self.checkUnique(named)
        let oldSections = sectionIdentifiers
        let oldItems = oldSections.map { itemIdentifiers(inSection: $0) }
        guard let batch = update.sectionedBatch, oldItems.map(\.count) == batch.oldCounts, named.map(\.items.count) == batch.newCounts,
              Self.identifiers(from: (oldSections, oldItems), to: named, follow: batch)
        else {
            deleteAllItems()
            append(named)
            return named.map(\.section)
        }
        if !batch.sections.deleted.isEmpty { deleteSections(batch.sections.deleted.map { oldSections[$0] }) }
        if !batch.rows.deleted.isEmpty { deleteItems(batch.rows.deleted.map { oldItems[$0.section][$0.row] }) }
        placeSections(named, inserted: Set(batch.sections.inserted), moved: Set(batch.sections.moved.map(\.to)))
        placeRows(named, skipping: Set(batch.sections.inserted), inserted: Set(batch.rows.inserted), moved: Set(batch.rows.moved.map(\.to)))
        let changed = batch.rows.reloaded.map { oldItems[$0.section][$0.row] }
        let rebuilt = changed.filter(rebuilding)
        let reconfigured = rebuilt.isEmpty ? changed : changed.filter { !rebuilding($0) }
        if !reconfigured.isEmpty { reconfigureItems(reconfigured) }
        if !rebuilt.isEmpty { reloadItems(rebuilt) }
        return batch.sections.updated.map { named[$0].section }
    }

    private mutating func append(_ named: [(section: SectionIdentifierType, items: [ItemIdentifierType])]) {
        appendSections(named.map(\.section))
        for (section, items) in named where !items.isEmpty { appendItems(items, toSection: section) }
    }

    /// Puts the sections `inserted` and `moved` (new indices) where `named` has them, each
    /// after its new predecessor (the first before the snapshot's first): the others keep
    /// their order, so each lands in its place.
    private mutating func placeSections(_ named: [(section: SectionIdentifierType, items: [ItemIdentifierType])], inserted: Set<Int>, moved: Set<Int>) {
        for (index, (section, items)) in named.enumerated() where inserted.contains(index) || moved.contains(index) {
            let first = index == 0 ? sectionIdentifiers.first : nil
            if inserted.contains(index) {
                if index > 0 {
                    insertSections([section], afterSection: named[index - 1].section)
                } else if let first {
                    insertSections([section], beforeSection: first)
                } else {
                    appendSections([section])
                }
                if !items.isEmpty { appendItems(items, toSection: section) }
            } else if index > 0 {
                moveSection(section, afterSection: named[index - 1].section)
            } else if let first, first != section {
                moveSection(section, beforeSection: first)
            }
        }
    }

    /// Puts the rows `inserted` and `moved` (new paths) of the sections not `skipping`
    /// (inserted whole) where `named` has them, as ``placeSections(_:inserted:moved:)`` does
    /// sections; a run of inserted rows in one call.
    private mutating func placeRows(
        _ named: [(section: SectionIdentifierType, items: [ItemIdentifierType])], skipping: Set<Int>, inserted: Set<RowPath>, moved: Set<RowPath>
    ) {
        guard !inserted.isEmpty || !moved.isEmpty else { return }
        for (index, (section, items)) in named.enumerated() where !skipping.contains(index) {
            var row = 0
            while row < items.count {
                let path = RowPath(section: index, row: row)
                if inserted.contains(path) {
                    var end = row + 1
                    while end < items.count && inserted.contains(RowPath(section: index, row: end)) { end += 1 }
                    let run = Array(items[row..<end])
                    if row > 0 {
                        insertItems(run, afterItem: items[row - 1])
                    } else if let first = itemIdentifiers(inSection: section).first {
                        insertItems(run, beforeItem: first)
                    } else {
                        appendItems(run, toSection: section)
                    }
                    row = end
                    continue
                }
                if moved.contains(path) {
                    let item = items[row]
                    if row > 0 {
                        moveItem(item, afterItem: items[row - 1])
                    } else if let first = itemIdentifiers(inSection: section).first {
                        if first != item { moveItem(item, beforeItem: first) }
                    } else {
                        // Into an empty section: a snapshot moves only next to an item.
                        deleteItems([item])
                        appendItems([item], toSection: section)
                    }
                }
                row += 1
            }
        }
    }

    /// Whether `batch` starts from the identifiers `old` (the snapshot's) and leads to `named`:
    /// what it moves is the same identifier at both ends, and what it keeps in place the same
    /// identifiers on both sides (a snapshot that drifted from what the server diffed would
    /// have the adapter name identifiers it lacks, and trap).
    private static func identifiers(
        from old: (sections: [SectionIdentifierType], items: [[ItemIdentifierType]]),
        to named: [(section: SectionIdentifierType, items: [ItemIdentifierType])], follow batch: SectionedBatch
    ) -> Bool {
        let movesMatch = batch.sections.moved.allSatisfy { old.sections[$0.from] == named[$0.to].section }
            && batch.rows.moved.allSatisfy { old.items[$0.from.section][$0.from.row] == named[$0.to.section].items[$0.to.row] }
        guard movesMatch else { return false }
        // What stays: the old side but for what is deleted or moved away, the new side but
        // for what is inserted or moved in.
        let leavingSections = Set(batch.sections.deleted + batch.sections.moved.map(\.from))
        let arrivingSections = Set(batch.sections.inserted + batch.sections.moved.map(\.to))
        let leavingRows = Set(batch.rows.deleted + batch.rows.moved.map(\.from))
        let arrivingRows = Set(batch.rows.inserted + batch.rows.moved.map(\.to))
        let deletedSections = Set(batch.sections.deleted)
        let insertedSections = Set(batch.sections.inserted)
        var keptOld = (sections: Set<SectionIdentifierType>(), items: Set<ItemIdentifierType>())
        for (section, items) in zip(old.sections, old.items).enumerated() {
            if !leavingSections.contains(section) { keptOld.sections.insert(items.0) }
            guard !deletedSections.contains(section) else { continue }
            for (row, item) in items.1.enumerated() where !leavingRows.contains(RowPath(section: section, row: row)) { keptOld.items.insert(item) }
        }
        var keptNew = (sections: Set<SectionIdentifierType>(), items: Set<ItemIdentifierType>())
        for (section, entry) in named.enumerated() {
            if !arrivingSections.contains(section) { keptNew.sections.insert(entry.section) }
            guard !insertedSections.contains(section) else { continue }
            for (row, item) in entry.items.enumerated() where !arrivingRows.contains(RowPath(section: section, row: row)) { keptNew.items.insert(item) }
        }
        return keptOld.sections == keptNew.sections && keptOld.items == keptNew.items
    }

    /// Throws when two sections, or two rows anywhere, of `named` share an identifier.
    private static func checkUnique(_ named: [(section: SectionIdentifierType, items: [ItemIdentifierType])]) throws(RepeatedIdentifierError) {
        var sections = Set<SectionIdentifierType>()
        var items = Set<ItemIdentifierType>()
        for (section, rows) in named {
            guard sections.insert(section).inserted else { throw RepeatedIdentifierError(description: "two sections of identifier \(section)") }
            for item in rows where !items.insert(item).inserted {
                throw RepeatedIdentifierError(description: "two rows of identifier \(item)")
            }
        }
    }
}

extension DiffableDataSource {
    /// Shows `update`, a followed feed's next version: the snapshot shown changed as
    /// ``DiffableSnapshot/apply(_:to:identifiers:rebuilding:)`` says, then applied once,
    /// animated. Returns the sections whose headers changed, for the app to refresh.
    @discardableResult
    public func show<Header, Item>(
        _ update: FeedUpdate<Header, Item>, identifiers: DiffableIdentifiers<Header, Item, Snapshot.SectionIdentifierType, Snapshot.ItemIdentifierType>,
        rebuilding: (Snapshot.ItemIdentifierType) -> Bool = { _ in false }, animatingDifferences: Bool = true
    ) throws(RepeatedIdentifierError) -> [Snapshot.SectionIdentifierType] {
        var shown = snapshot()
        let updated = try shown.apply(update.update, to: update.collection, identifiers: identifiers, rebuilding: rebuilding)
        applySnapshot(shown, animatingDifferences: animatingDifferences)
        return updated
    }
}
