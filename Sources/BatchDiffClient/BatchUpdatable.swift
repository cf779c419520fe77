import BatchDiff

/// A view that shows a collection and animates changes in batches: what a table or
/// collection view offers (`performBatchUpdates`), in the terms of a batch. UIKit's views
/// conform (UIKitBatchUpdatable.swift); tests use a double that keeps UIKit's rules. Like
/// UIKit's views, it lives on the main actor.
@MainActor
public protocol BatchUpdatable {
    /// Rows per section the view shows now.
    var displayedRowCounts: [Int] { get }
    /// Runs `updates` as one animated batch: the data source changes inside it, and the
    /// operations below are collected and animated together.
    func batchUpdate(_ updates: @escaping () -> Void)
    /// Deletes old sections (indexes in the collection before the batch).
    func delete(sections: [Int])
    /// Inserts new sections (indexes in the collection after the batch).
    func insert(sections: [Int])
    /// Moves a section from its old index to its new one.
    func move(section: Int, to: Int)
    /// Deletes old rows.
    func delete(rows: [RowPath])
    /// Inserts new rows.
    func insert(rows: [RowPath])
    /// Reloads old rows whose cells must be rebuilt.
    func reload(rows: [RowPath])
    /// Reconfigures rows whose content changed, once a batch is done (new index paths, as
    /// the data source holds them): their cells are kept and updated in place
    /// (`reconfigureRows(at:)`, iOS 15).
    func reconfigure(rows: [RowPath])
    /// Moves a row from its old index path to its new one.
    func move(row: RowPath, to: RowPath)
    /// Refreshes the headers of these sections (new indexes), after the batch. (UIKit's
    /// views cannot refresh a header alone: they reload those sections, without animation,
    /// once the batch is done.)
    func refresh(headers: [Int])
    /// Shows the data source's collection afresh, without animation.
    func reloadAll()
}

extension BatchUpdatable {
    /// A view that cannot reconfigure rows reloads them, after the batch, where they stand.
    public func reconfigure(rows: [RowPath]) {
        batchUpdate { reload(rows: rows) }
    }
}

extension BatchUpdate {
    /// Shows this update on `view`; `updateData` makes the view's data source hold the new
    /// collection, and is called exactly once.
    ///
    /// Rows whose content changed (the batch's `reloaded`, old index paths, which
    /// `rebuilding` is asked about) are reconfigured once the batch is done, at their new
    /// index paths: their cells stay and are updated in place; those `rebuilding` names (a
    /// cell whose type or layout changes) are reloaded in the batch instead. When the view does not show the counts
    /// the update starts from (its data drifted from what the server diffed), or the update
    /// is a reload, the view reloads instead of animating: UIKit would raise
    /// `NSInternalInconsistencyException` otherwise. Sections whose headers changed are
    /// refreshed after the batch, never reloaded with their rows.
    @MainActor
    public func perform(on view: some BatchUpdatable, rebuilding: (RowPath) -> Bool = { _ in false }, updateData: @escaping () -> Void) {
        guard let batch = sectionedBatch, view.displayedRowCounts == oldCounts else {
            updateData()
            view.reloadAll()
            return
        }
        // Reconfigured after the batch, where the rows then stand: inside it UIKit would
        // read the data source, already new, at their old index paths.
        let changed = batch.rows.reloaded
        guard let landed = try? batch.newPathsOfReloadedRows() else {
            updateData()
            view.reloadAll()
            return
        }
        let rebuilt = changed.filter(rebuilding)
        let reconfigured = zip(changed, landed).filter { !rebuilding($0.0) }.map(\.1)
        view.batchUpdate {
            updateData()
            view.delete(sections: batch.sections.deleted)
            view.insert(sections: batch.sections.inserted)
            for move in batch.sections.moved { view.move(section: move.from, to: move.to) }
            view.delete(rows: batch.rows.deleted)
            view.insert(rows: batch.rows.inserted)
            if !rebuilt.isEmpty { view.reload(rows: rebuilt) }
            for move in batch.rows.moved { view.move(row: move.from, to: move.to) }
        }
        if !reconfigured.isEmpty { view.reconfigure(rows: reconfigured) }
        if !batch.sections.updated.isEmpty { view.refresh(headers: batch.sections.updated) }
    }
}
