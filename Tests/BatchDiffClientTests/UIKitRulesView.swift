import BatchDiff
import BatchDiffClient

/// What UIKit raises when a batch update breaks its rules.
struct InternalInconsistencyException: Error, CustomStringConvertible {
    var description: String
}

/// A table view double that keeps UIKit's rules for `performBatchUpdates`: every index in
/// range and named once, no row operation inside a section deleted or inserted, no row
/// both deleted (or reloaded) and moved, rows reconfigured only after the batch and shown, and, after the updates, rows per section equal to
/// what the data source then says: the old count, minus deletes and moves out, plus
/// inserts and moves in. A broken rule is recorded as the exception UIKit would raise.
///
/// Sections are mapped old to new the way UIKit does it, independently of the library: moved
/// and inserted sections at their destinations, the others filling the rest in order.
@MainActor
final class UIKitRulesView: BatchUpdatable {
    /// Rows per section on screen.
    private(set) var displayedRowCounts: [Int]
    /// Rows per section the data source holds (the app's model).
    var dataSourceCounts: () -> [Int]
    private(set) var exception: InternalInconsistencyException?
    private(set) var reloads = 0
    private(set) var refreshedHeaders: [Int] = []
    /// The rows the last batch reloaded (old index paths), and those reconfigured after it
    /// (new index paths).
    private(set) var lastReloaded: [RowPath] = []
    private(set) var lastReconfigured: [RowPath] = []

    private var pending: Operations?

    private struct Operations {
        var deletedSections: [Int] = []
        var insertedSections: [Int] = []
        var movedSections: [Move<Int>] = []
        var deletedRows: [RowPath] = []
        var insertedRows: [RowPath] = []
        var reloadedRows: [RowPath] = []
        var movedRows: [Move<RowPath>] = []
    }

    init(showing counts: [Int], dataSource: @escaping () -> [Int]) {
        displayedRowCounts = counts
        dataSourceCounts = dataSource
    }

    func batchUpdate(_ updates: @escaping () -> Void) {
        pending = Operations()
        updates()
        let operations = pending!
        pending = nil
        lastReloaded = operations.reloadedRows
        lastReconfigured = []
        do {
            try check(operations)
            displayedRowCounts = dataSourceCounts()
        } catch {
            exception = error as? InternalInconsistencyException
        }
    }

    func delete(sections: [Int]) { pending!.deletedSections += sections }
    func insert(sections: [Int]) { pending!.insertedSections += sections }
    func move(section: Int, to: Int) { pending!.movedSections.append(Move(from: section, to: to)) }
    func delete(rows: [RowPath]) { pending!.deletedRows += rows }
    func insert(rows: [RowPath]) { pending!.insertedRows += rows }
    func reload(rows: [RowPath]) { pending!.reloadedRows += rows }
    /// Reconfigures rows after a batch: each must be shown, and named once.
    func reconfigure(rows: [RowPath]) {
        lastReconfigured = rows
        guard pending == nil else { return exception = InternalInconsistencyException(description: "reconfigure inside the batch") }
        guard Set(rows).count == rows.count, rows.allSatisfy({ displayedRowCounts.indices.contains($0.section) && (0..<displayedRowCounts[$0.section]).contains($0.row) }) else {
            return exception = InternalInconsistencyException(description: "reconfigure of rows not shown, or named twice: \(rows)")
        }
    }
    func move(row: RowPath, to: RowPath) { pending!.movedRows.append(Move(from: row, to: to)) }
    func refresh(headers: [Int]) { refreshedHeaders += headers }

    func reloadAll() {
        reloads += 1
        displayedRowCounts = dataSourceCounts()
    }

    private func check(_ operations: Operations) throws {
        let old = displayedRowCounts
        let new = dataSourceCounts()
        func fail(_ reason: String) -> InternalInconsistencyException { InternalInconsistencyException(description: reason) }
        // Sections.
        let leaving = operations.deletedSections + operations.movedSections.map(\.from)
        let arriving = operations.insertedSections + operations.movedSections.map(\.to)
        guard Set(leaving).count == leaving.count, leaving.allSatisfy(old.indices.contains) else {
            throw fail("invalid section deletes or moves \(leaving) for \(old.count) sections")
        }
        guard Set(arriving).count == arriving.count, arriving.allSatisfy(new.indices.contains) else {
            throw fail("invalid section inserts or moves \(arriving) for \(new.count) sections after the update")
        }
        guard new.count == old.count - operations.deletedSections.count + operations.insertedSections.count else {
            throw fail("the number of sections after the update (\(new.count)) must equal \(old.count) - \(operations.deletedSections.count) deleted + \(operations.insertedSections.count) inserted")
        }
        // Where each old section lands: moved ones at their destinations, the others in order.
        var newSectionOfOld = [Int?](repeating: nil, count: old.count)
        for move in operations.movedSections { newSectionOfOld[move.from] = move.to }
        var free = (0..<new.count).filter { !Set(arriving).contains($0) }.makeIterator()
        for section in old.indices where newSectionOfOld[section] == nil && !operations.deletedSections.contains(section) {
            newSectionOfOld[section] = free.next()
        }
        let surviving = Set(newSectionOfOld.compactMap { $0 })
        // Rows.
        let rowsLeaving = operations.deletedRows + operations.movedRows.map(\.from)
        for path in rowsLeaving + operations.reloadedRows {
            guard old.indices.contains(path.section), !operations.deletedSections.contains(path.section) else {
                throw fail("row \(path) is in a section that is deleted or does not exist")
            }
            guard (0..<old[path.section]).contains(path.row) else { throw fail("row \(path) is outside section \(path.section) of \(old[path.section]) rows") }
        }
        let rowsArriving = operations.insertedRows + operations.movedRows.map(\.to)
        for path in rowsArriving {
            guard surviving.contains(path.section) else { throw fail("row \(path) is in a section inserted or not there after the update") }
            guard (0..<new[path.section]).contains(path.row) else { throw fail("row \(path) is outside section \(path.section) of \(new[path.section]) rows after the update") }
        }
        guard Set(rowsLeaving).count == rowsLeaving.count else { throw fail("a row deleted or moved twice in \(rowsLeaving)") }
        guard Set(rowsArriving).count == rowsArriving.count else { throw fail("a row inserted or moved to twice in \(rowsArriving)") }
        guard Set(operations.reloadedRows).count == operations.reloadedRows.count, Set(operations.reloadedRows).isDisjoint(with: rowsLeaving) else {
            throw fail("attempt to reload a row that is deleted or moved, or twice: \(operations.reloadedRows)")
        }
        for (oldSection, landing) in newSectionOfOld.enumerated() {
            guard let newSection = landing else { continue }
            let out = rowsLeaving.filter { $0.section == oldSection }.count
            let into = rowsArriving.filter { $0.section == newSection }.count
            guard new[newSection] == old[oldSection] - out + into else {
                throw fail("invalid number of rows in section \(newSection): after the update (\(new[newSection])) must equal \(old[oldSection]) - \(out) + \(into)")
            }
        }
    }
}
