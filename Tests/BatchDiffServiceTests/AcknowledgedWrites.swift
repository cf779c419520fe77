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

extension AcknowledgedWrites {
    /// Starts `writers` writers on a thread: each PUTs `rounds` big snapshots (3,000 items,
    /// edited each round) to a feed of its own, `w<writer>`, trying `clients` in turn from a
    /// different one each round (one that does not answer, a killed server, is passed over),
    /// and records each acknowledged write. A writer stops at an answer other than 200,
    /// told in `unexpected`.
    func startWriters(_ writers: Int, rounds: Int, clients: [HTTPClient], unexpected: Collector<String>) -> Thread {
        let thread = Thread {
            _ = runConcurrently(writers, timeout: 60) { writer in
                var generator = SnapshotGenerator(seed: UInt64(writer))
                var snapshot: [Any] = (0..<3000).map { ["id": $0, "w": writer] }
                for round in 0..<rounds {
                    snapshot = generator.nextList(after: snapshot)
                    for offset in clients.indices {
                        let client = clients[(round + offset) % clients.count]
                        guard let response = try? client.put("/feeds/w\(writer)", jsonText(snapshot)) else { continue }
                        guard response.status == 200, let version = int(response.object["version"]) else {
                            return unexpected.append("w\(writer): PUT \(response.status) \(response.text)")
                        }
                        self.record(feed: "w\(writer)", version: version, content: canonicalJSON(snapshot))
                        break
                    }
                }
            }
        }
        thread.start()
        return thread
    }
}
