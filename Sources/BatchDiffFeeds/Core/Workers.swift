import Dispatch
import Metrics
import Synchronization

/// Runs CPU-heavy work (reading big snapshots, diffing, writing big answers) on worker
/// threads: off the caller's thread (an HTTP server's, say) and off Swift's cooperative
/// pool, whose few threads must stay free for quick work. Dispatch runs as many at once as
/// there are cores, at utility priority; the rest wait in the queue, whose depth is the
/// gauge `batchdiff_work_queue_depth` (work waiting or running).
package enum Workers {
    private static let queue = DispatchQueue(label: "batchdiff.workers", qos: .utility, attributes: .concurrent)
    private static let depth = Atomic<Int>(0)
    private static let depthGauge = Gauge(label: "batchdiff_work_queue_depth")

    /// The result of `work`, run on a worker thread.
    package static func run<Value: Sendable, Failure: Error>(
        _ work: @escaping @Sendable () throws(Failure) -> Value
    ) async throws(Failure) -> Value {
        depthGauge.record(depth.add(1, ordering: .relaxed).newValue)
        let result: Result<Value, Failure> = await withCheckedContinuation { continuation in
            queue.async {
                let result = Result { () throws(Failure) -> Value in try work() }
                depthGauge.record(depth.subtract(1, ordering: .relaxed).newValue)
                continuation.resume(returning: result)
            }
        }
        return try result.get()
    }
}
