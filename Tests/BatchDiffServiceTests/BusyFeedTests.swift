import Foundation
import TestSupport
import XCTest

/// A big write does not stall anyone: while a large PUT is parsed and diffed, with small PUTs
/// to the same feed queued behind it, /healthz answers quickly on fresh connections, and every
/// PUT succeeds in the order it arrived (docs/feeds.md §3.7).
final class BusyFeedTests: ServerTestCase {
    func testABigWriteWithWritesQueuedBehindItStallsNobody() throws {
        let server = try startServer(["--body-limit", "\(64 << 20)"])
        let client = server.client
        let count = 300_000
        var random = SplitMix64(state: 7)
        let items = (0..<count).map { "\"item-\($0)\"" }
        let first = assertVersion(try client.request("PUT", "/feeds/busy", body: Array(("[" + items.joined(separator: ",") + "]").utf8), timeout: 60))
        let shuffled = "[" + items.shuffled(using: &random).joined(separator: ",") + "]"

        // Probes /healthz on a fresh connection every 20 ms until told to stop.
        let probing = ManagedAtomicFlag()
        let probes = ProbeTimes()
        let prober = Thread {
            while !probing.isSet {
                let start = Date()
                let status = try? client.get("/healthz", timeout: 5).status
                probes.append(status == 200 ? Date().timeIntervalSince(start) : .infinity)
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        prober.start()

        // Each write is sent once the one before has asked for its turn, so their order is known.
        let asked = try XCTUnwrap(try client.metric("batchdiff_feed_writes_total"))
        func waitForTurn(_ writes: Int) {
            let turns = { ((try? client.metric("batchdiff_feed_writes_total")) ?? nil) ?? 0 }
            XCTAssertTrue(eventually(timeout: 60) { turns() >= asked + writes }, "write \(writes) did not arrive: \(turns() - asked)")
        }
        let big = try client.connect(timeout: 120)
        try big.send(HTTPClient.requestBytes("PUT", "/feeds/busy", body: Array(shuffled.utf8), headers: ["Content-Type": "application/json"]))
        waitForTurn(1)
        // Small writes, each on its own connection.
        let small = try (0..<4).map { index in
            let connection = try client.connect(timeout: 120)
            try connection.send(HTTPClient.requestBytes("PUT", "/feeds/busy", body: Array("[\(index), \"small\"]".utf8), headers: [:]))
            waitForTurn(index + 2)
            return connection
        }
        let bigVersion = assertVersion(try big.readResponse(timeout: 120))
        let smallVersions = try small.map { assertVersion(try $0.readResponse(timeout: 120)) }
        probing.set()
        XCTAssertTrue(eventually(timeout: 120) { !prober.isExecuting }, "the prober did not end")

        XCTAssertEqual([bigVersion] + smallVersions, Array(first + 1...first + 5), "every PUT stored, in the order it arrived")
        let latest = assertJSON(try client.get("/feeds/busy"))
        XCTAssertEqual(int(latest["version"]), first + 5)
        let data = latest["data"].map(canonicalJSON) ?? ""
        XCTAssertTrue(data == #"[3,"small"]"#, "the last PUT to arrive is the latest, not \(data.prefix(60))…")
        let times = probes.all
        print("/healthz during a \(count)-item write and 4 queued: \(times.count) probes, slowest \(Int((times.max() ?? 0) * 1000)) ms")
        XCTAssertGreaterThan(times.count, 5, "the write was over before /healthz was probed")
        XCTAssertLessThan(times.max() ?? 0, 0.1, "/healthz during the write, \(times.count) probes: slowest \(Int((times.max() ?? 0) * 1000)) ms")
    }
}

/// A flag set once, read from another thread.
private final class ManagedAtomicFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

/// Probe durations, appended from the probing thread.
private final class ProbeTimes: @unchecked Sendable {
    private let lock = NSLock()
    private var times: [Double] = []
    func append(_ time: Double) { lock.withLock { times.append(time) } }
    var all: [Double] { lock.withLock { times } }
}
