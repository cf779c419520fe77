import CMicroHTTPDShim

/// Process-wide settings for a server of many connections and large requests.
public enum ProcessTuning {
    /// Keeps freed memory for reuse rather than returning large blocks to the kernel.
    public static func keepFreedMemory() { bd_keep_freed_memory() }

    /// Allows as many open files (connections) as the system lets this process have.
    public static func raiseOpenFileLimit() { bd_raise_open_file_limit() }
}
