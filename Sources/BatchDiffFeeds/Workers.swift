import Dispatch

/// Runs CPU-heavy work (reading big snapshots, diffing, writing big answers) on worker
/// threads: off the caller's thread (an HTTP server's, say) and off Swift's cooperative
/// pool, whose few threads must stay free for quick work.
public enum Workers {
    private static let queue = DispatchQueue(label: "batchdiff.workers", qos: .utility, attributes: .concurrent)

    /// The result of `work`, run on a worker thread.
    public static func run<Value: Sendable, Failure: Error>(
        _ work: @escaping @Sendable () throws(Failure) -> Value
    ) async throws(Failure) -> Value {
        let result: Result<Value, Failure> = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: Result { () throws(Failure) -> Value in try work() }) }
        }
        return try result.get()
    }
}
