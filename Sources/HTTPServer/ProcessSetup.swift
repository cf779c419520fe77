import CGlibcExtras
import Glibc
import Synchronization

/// Process-wide setup for a server of many connections and large requests.
public enum ProcessSetup {
    /// Keeps freed memory for reuse instead of returning each large block to the kernel, so
    /// big requests do not fault their memory in again every time; and keeps one arena of
    /// the allocator a core (glibc makes up to eight a core): a block freed in one arena is
    /// reused by that arena only, so each arena more holds room of its own that the others
    /// cannot use (100 PUTs of a 100,000-row feed: 121 MB resident at the end, 116 to 134,
    /// with glibc's arenas; 114 MB, 114 to 122, with one a core).
    public static func keepFreedMemory() {
        mallopt(M_MMAP_THRESHOLD, 256 << 20)
        mallopt(M_TRIM_THRESHOLD, 512 << 20)
        mallopt(M_ARENA_MAX, Int32(max(2, sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
    }

    /// Ignores SIGPIPE: a client that goes away mid-answer is the server's business, not a
    /// reason for the process to die.
    public static func ignoreBrokenPipes() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// Raises the soft limit of open files to the hard limit: every connection, parked long
    /// polls included, holds one. The limit in force after it (`Int.max` when unlimited or
    /// unknown).
    @discardableResult
    public static func raiseOpenFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(RLIMIT_NOFILE_VALUE, &limit) == 0 else { return .max }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(RLIMIT_NOFILE_VALUE, &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur > rlim_t(Int.max) ? .max : Int(limit.rlim_cur)  // (RLIM_INFINITY is all ones)
    }

    /// RLIMIT_NOFILE as getrlimit(2) takes it (Glibc imports the resource as an enum).
    private static let RLIMIT_NOFILE_VALUE = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
}

/// Returns the freed memory the allocator keeps (``ProcessSetup/keepFreedMemory()``) to the
/// system once big writes pause: each ``afterBigWrite()`` waits `pause`, and only the last of
/// a burst returns it. A burst of big writes (or a `POST /diff` right after one) reuses the
/// memory the one before freed; a server that stops writing gives it back. Through a long
/// burst it is returned after every second big write too, so resident memory stays near
/// what the feeds hold (a feed's versions stay allocated between each write's transient
/// blocks, and the freed room between them would grow to about twice what is held): the
/// next write faults part of it in again, some 10% of a 100,000-row `PUT`'s time.
public final class FreedMemoryReturn: Sendable {
    private let writes = Atomic<Int>(0)
    private let pause: Duration
    /// Big writes between two returns through a burst of them.
    private static let burstInterval = 2

    /// Returns freed memory once no big write came for `pause`.
    public init(after pause: Duration = .milliseconds(500)) {
        self.pause = pause
    }

    /// Notes a big write: the freed memory goes back once none follows within the pause,
    /// and, through a long burst, after every ``burstInterval``-th.
    public func afterBigWrite() {
        let write = writes.add(1, ordering: .relaxed).newValue
        if write % Self.burstInterval == 0 {
            Task.detached(priority: .background) { _ = malloc_trim(0) }
        }
        Task.detached(priority: .background) { [self] in
            try? await Task.sleep(for: pause)
            guard writes.load(ordering: .relaxed) == write else { return }
            _ = malloc_trim(0)
        }
    }
}
