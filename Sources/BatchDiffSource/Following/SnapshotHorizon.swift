/// Where a feed's first version stands in the replication stream: the database snapshot
/// its rows were read at (`pg_current_snapshot()`: transactions below `xmin` committed,
/// from `xmax` on not yet, those in progress listed) and the WAL insert position read just
/// after it. A transaction the snapshot saw has its commit record before that position;
/// so the stream's transactions that end there or before and that the snapshot saw are
/// already in the feed, and every other one is not (docs/sources.md §4).
struct SnapshotHorizon: Equatable, Sendable {
    var xmin: UInt32
    var xmax: UInt32
    var inProgress: Set<UInt32>
    var position: LogPosition

    /// The horizon of `snapshot` (`pg_current_snapshot()`'s text, `xmin:xmax:xip,...`,
    /// 64-bit ids whose low 32 bits the stream's transactions carry) and `position`.
    init?(snapshot: String, position: LogPosition) {
        let fields = snapshot.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 3, let xmin = UInt64(fields[0]), let xmax = UInt64(fields[1]) else { return nil }
        var inProgress: Set<UInt32> = []
        for id in fields[2].split(separator: ",") {
            guard let id = UInt64(id) else { return nil }
            inProgress.insert(UInt32(truncatingIfNeeded: id))
        }
        self.xmin = UInt32(truncatingIfNeeded: xmin)
        self.xmax = UInt32(truncatingIfNeeded: xmax)
        self.inProgress = inProgress
        self.position = position
    }

    /// Whether the snapshot saw transaction `xid` committed.
    func saw(_ xid: UInt32) -> Bool {
        if Self.precedes(xid, xmin) { return true }
        if !Self.precedes(xid, xmax) { return false }
        return !inProgress.contains(xid)
    }

    /// Whether the feed already holds what the transaction `xid`, whose commit ends at
    /// `end`, changed.
    func holds(_ xid: UInt32, endingAt end: LogPosition) -> Bool {
        end <= position && saw(xid)
    }

    /// Whether the stream has passed the horizon at `end`: no later transaction is in the
    /// feed.
    func isPassed(at end: LogPosition) -> Bool { end > position }

    /// Transaction ids compare modulo 2^32, as PostgreSQL's do.
    private static func precedes(_ left: UInt32, _ right: UInt32) -> Bool {
        Int32(bitPattern: left &- right) < 0
    }
}
