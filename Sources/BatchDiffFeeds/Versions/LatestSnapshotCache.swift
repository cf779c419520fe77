/// The latest snapshots a durable store keeps in memory, within a bound of bytes: the
/// store reads a feed's latest version from its file or database only when it is not here.
package struct LatestSnapshotCache: Sendable {
    private var snapshots: [FeedID: StoredSnapshot] = [:]
    /// Bytes of the snapshots kept, estimated.
    package private(set) var bytes = 0
    private let bound: Int

    /// A cache that keeps up to `bound` bytes of snapshots.
    package init(bound: Int) {
        self.bound = bound
    }

    /// The latest snapshot kept of feed `id`.
    package subscript(id: FeedID) -> StoredSnapshot? { snapshots[id] }

    /// Forgets feed `id`.
    package mutating func remove(_ id: FeedID) {
        if let removed = snapshots.removeValue(forKey: id) { bytes -= removed.snapshot.byteEstimate }
    }

    /// Keeps `stored` as the latest snapshot of feed `id`, dropping other feeds' while over
    /// the bound; a snapshot larger than the bound is not kept.
    package mutating func keep(_ stored: StoredSnapshot, for id: FeedID) {
        remove(id)
        guard stored.snapshot.byteEstimate <= bound else { return }
        while bytes + stored.snapshot.byteEstimate > bound, let victim = snapshots.keys.first { remove(victim) }
        snapshots[id] = stored
        bytes += stored.snapshot.byteEstimate
    }
}
