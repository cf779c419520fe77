import CProcessSupport

/// Process-wide setup for a server of many connections and large requests.
public enum ProcessSetup {
    /// Keeps freed memory for reuse rather than returning large blocks to the kernel.
    public static func keepFreedMemory() { bd_keep_freed_memory() }

    /// Catches SIGTERM and SIGINT from now on (a container stop sends SIGTERM to PID 1, which
    /// has no default action for it), and ignores SIGPIPE.
    public static func catchStopSignals() { bd_catch_stop_signals() }

    /// Blocks until SIGTERM or SIGINT arrives.
    public static func waitForStopSignal() { bd_wait_for_stop_signal() }

    /// Allows as many open files (connections) as the system lets this process have.
    public static func raiseOpenFileLimit() { bd_raise_open_file_limit() }
}
