import Foundation

/// The last acknowledged version and content of each feed, recorded from writer threads.
final class AcknowledgedWrites: @unchecked Sendable {
    private let lock = NSLock()
    private var writes: [String: (version: Int, content: String)] = [:]
    private var total = 0

    func record(feed: String, version: Int, content: String) {
        lock.withLock {
            writes[feed] = (version, content)
            total += 1
        }
    }

    var count: Int { lock.withLock { total } }
    var last: [String: (version: Int, content: String)] { lock.withLock { writes } }
}
