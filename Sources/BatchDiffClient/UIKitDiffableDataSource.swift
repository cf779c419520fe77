// UIKit's diffable data sources as DiffableDataSource: thin forwarding only (CI, on Linux,
// does not compile it; what decides the snapshot's operations is tested there against a
// double, DiffableSnapshot+BatchUpdate.swift).
#if canImport(UIKit)
import UIKit

extension NSDiffableDataSourceSnapshot: DiffableSnapshot {}

extension UITableViewDiffableDataSource: DiffableDataSource {
    public func applySnapshot(_ snapshot: NSDiffableDataSourceSnapshot<SectionIdentifierType, ItemIdentifierType>, animatingDifferences: Bool) {
        apply(snapshot, animatingDifferences: animatingDifferences)
    }
}

extension UICollectionViewDiffableDataSource: DiffableDataSource {
    public func applySnapshot(_ snapshot: NSDiffableDataSourceSnapshot<SectionIdentifierType, ItemIdentifierType>, animatingDifferences: Bool) {
        apply(snapshot, animatingDifferences: animatingDifferences)
    }
}
#endif
