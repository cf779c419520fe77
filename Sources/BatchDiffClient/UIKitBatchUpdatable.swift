// UIKit's views as BatchUpdatable: thin forwarding only (CI, on Linux, does not compile it).
#if canImport(UIKit)
import BatchDiff
import UIKit

extension UITableView: BatchUpdatable {
    public var displayedRowCounts: [Int] { (0..<numberOfSections).map { numberOfRows(inSection: $0) } }

    public func batchUpdate(_ updates: @escaping () -> Void) {
        performBatchUpdates(updates, completion: nil)
    }

    public func delete(sections: [Int]) { deleteSections(IndexSet(sections), with: .automatic) }
    public func insert(sections: [Int]) { insertSections(IndexSet(sections), with: .automatic) }
    public func move(section: Int, to: Int) { moveSection(section, toSection: to) }
    public func delete(rows: [RowPath]) { deleteRows(at: rows.map(\.indexPath), with: .automatic) }
    public func insert(rows: [RowPath]) { insertRows(at: rows.map(\.indexPath), with: .automatic) }
    public func reload(rows: [RowPath]) { reloadRows(at: rows.map(\.indexPath), with: .automatic) }
    public func reconfigure(rows: [RowPath]) { reconfigureRows(at: rows.map(\.indexPath)) }
    public func move(row: RowPath, to: RowPath) { moveRow(at: row.indexPath, to: to.indexPath) }
    public func refresh(headers: [Int]) { UIView.performWithoutAnimation { reloadSections(IndexSet(headers), with: .none) } }
    public func reloadAll() { reloadData() }
}

extension UICollectionView: BatchUpdatable {
    public var displayedRowCounts: [Int] { (0..<numberOfSections).map { numberOfItems(inSection: $0) } }

    public func batchUpdate(_ updates: @escaping () -> Void) {
        performBatchUpdates(updates, completion: nil)
    }

    public func delete(sections: [Int]) { deleteSections(IndexSet(sections)) }
    public func insert(sections: [Int]) { insertSections(IndexSet(sections)) }
    public func move(section: Int, to: Int) { moveSection(section, toSection: to) }
    public func delete(rows: [RowPath]) { deleteItems(at: rows.map(\.indexPath)) }
    public func insert(rows: [RowPath]) { insertItems(at: rows.map(\.indexPath)) }
    public func reload(rows: [RowPath]) { reloadItems(at: rows.map(\.indexPath)) }
    public func reconfigure(rows: [RowPath]) { reconfigureItems(at: rows.map(\.indexPath)) }
    public func move(row: RowPath, to: RowPath) { moveItem(at: row.indexPath, to: to.indexPath) }
    public func refresh(headers: [Int]) { UIView.performWithoutAnimation { reloadSections(IndexSet(headers)) } }
    public func reloadAll() { reloadData() }
}

extension RowPath {
    var indexPath: IndexPath { IndexPath(row: row, section: section) }
}
#endif
