import Glibc

/// The monotonic clock in nanoseconds, as one integer: the server reads it several times a
/// request (its duration, its connection's deadlines), where `ContinuousClock` would cost
/// a `Duration` and its 128-bit arithmetic each time.
enum MonotonicTime {
    static func nanoseconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return now.tv_sec * 1_000_000_000 + now.tv_nsec
    }
}
