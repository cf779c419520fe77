import Synchronization

/// Where a feed's versions start (docs/feeds.md §2): a version number and its ETag name one
/// content of one feed forever, so a new series of versions (a feed created again after a
/// deletion, or in a new process) starts above every number an earlier series may have
/// given out. It starts at the wall clock in microseconds since 1970: an earlier series
/// started earlier and gives out at most one number per write, and no write takes under a
/// microsecond. Within this process it also starts above every version seen, should the
/// clock step back. Versions stay below 2^53, exact in JavaScript, until the year 2255.
final class VersionSeries: Sendable {
    private let highestSeen = Atomic<Int>(0)
    private let clock: FeedClock

    /// Series starting at `clock`'s microseconds since 1970, or above.
    init(clock: FeedClock) {
        self.clock = clock
    }

    /// The first version of a new series.
    func start() -> Int {
        let start = max(Int((clock.secondsSince1970() * 1_000_000).rounded()), highestSeen.load(ordering: .relaxed) + 1)
        saw(start)
        return start
    }

    /// Notes a version given out, here or by another process sharing the store.
    func saw(_ version: Int) {
        var current = highestSeen.load(ordering: .relaxed)
        while version > current {
            let (exchanged, original) = highestSeen.compareExchange(expected: current, desired: version, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }
}
