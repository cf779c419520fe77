import Foundation

/// The time the feed core reads: a clock that waits are measured on (long polls' deadlines,
/// windows' waits, event streams' heartbeats) and the wall clock (where a series of versions
/// starts, a token's time, a cursor's period). Made from any `Clock` whose durations are
/// `Duration` (as swift-async-algorithms' timers are generic over theirs), so that a test
/// holds time in its hand; kept as this one type after, so that nothing above it is generic.
package struct FeedClock: Sendable {
    /// Time on the waits' clock since this clock was made.
    package let elapsed: @Sendable () -> Duration
    /// Returns when ``elapsed`` reaches the time given, or throws when the task is cancelled.
    let sleep: @Sendable (_ until: Duration) async throws -> Void
    /// Seconds since 1970.
    package let secondsSince1970: @Sendable () -> Double

    /// Waits measured on `clock`, and the wall clock `secondsSince1970` reads (the system's
    /// by default).
    package init<C: Clock>(_ clock: C, secondsSince1970: @escaping @Sendable () -> Double = FeedClock.systemSecondsSince1970)
    where C.Duration == Duration {
        let start = clock.now
        elapsed = { start.duration(to: clock.now) }
        sleep = { until in try await clock.sleep(until: start.advanced(by: until), tolerance: nil) }
        self.secondsSince1970 = secondsSince1970
    }

    /// The system's clocks: `ContinuousClock` for waits, the real-time clock for dates.
    package static let system = FeedClock(ContinuousClock())

    /// The real-time clock's seconds since 1970.
    package static let systemSecondsSince1970: @Sendable () -> Double = {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
