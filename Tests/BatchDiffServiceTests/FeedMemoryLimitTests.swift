import Foundation
import TestSupport
import XCTest

/// --max-feed-memory bounds what feeds hold, answers kept included, under any mix of writes
/// and reads; a write that could not fit even with every feed cut down to its latest is 507
/// and changes nothing, whether its feed is new or not (docs/feeds.md §7).
final class FeedMemoryLimitTests: ServerTestCase {
    private let limit = 2_000_000

    private func rows(_ count: Int, tag: Int) -> String {
        "[" + (0..<count).map { #"{"id":\#($0),"title":"row \#($0) of version \#(tag)","n":\#(($0 * 7 + tag) % 13)}"# }.joined(separator: ",") + "]"
    }

    func testABigWriteToAnExistingFeedIs507AndChangesNothing() throws {
        let client = try startServer(["--max-feed-memory", "\(limit)", "--body-limit", "\(16 << 20)"]).client
        let small = rows(100, tag: 1)
        let first = assertVersion(try client.put("/feeds/existing", small))
        let big = rows(120_000, tag: 2)  // about 8 MB
        XCTAssertGreaterThan(big.utf8.count, 3 * limit)
        let refused = assertProblem(try client.put("/feeds/existing", big), 507, "feed_storage_full")
        XCTAssertTrue((refused["detail"] as? String ?? "").contains("existing"), "\(refused)")
        let kept = assertJSON(try client.get("/feeds/existing"))
        XCTAssertEqual(int(kept["version"]), first, "the refused write made no version")
        XCTAssertEqual(kept["data"].map(canonicalJSON), canonicalJSON(parseJSON(small)))
        assertProblem(try client.put("/feeds/new", big), 507, "feed_storage_full")
        assertProblem(try client.get("/feeds/new"), 404, "feed_not_found")
        assertVersion(try client.put("/feeds/existing", rows(100, tag: 3)), first + 1)
    }

    func testFeedBytesStayWithinTheLimitUnderWritesAndReads() throws {
        let client = try startServer(["--max-feed-memory", "\(limit)", "--max-versions", "1000"]).client
        var random = SplitMix64(state: 11)
        var firsts: [String: Int] = [:]
        var latest: [String: Int] = [:]
        var highest = 0
        var refused = 0
        for step in 0..<240 {
            let feed = "f\(Int(random.next() % 6))"
            if random.next() % 3 == 0, let first = firsts[feed], let last = latest[feed] {
                // A read from some version: kept answers grow with these.
                let since = [0, first, max(first, last - 1), first + Int(random.next() % UInt64(last - first + 1))][Int(random.next() % 4)]
                let status = try client.get("/feeds/\(feed)/changes?since=\(since)").status
                XCTAssertTrue(status == 200 || status == 410, "changes?since=\(since): \(status)")
            } else {
                // Six feeds of the largest snapshots would not fit together: 507 for the
                // write that would pass the limit even with every feed at its latest.
                let count = [50, 400, 2000][Int(random.next() % 3)]
                let response = try client.put("/feeds/\(feed)", rows(count, tag: step))
                if response.status == 507 {
                    assertProblem(response, 507, "feed_storage_full")
                    refused += 1
                } else {
                    let written = assertVersion(response)
                    if firsts[feed] == nil { firsts[feed] = written }
                    latest[feed] = written
                }
            }
            let bytes = try XCTUnwrap(try client.metric("batchdiff_feed_bytes"))
            highest = max(highest, bytes)
            XCTAssertLessThanOrEqual(bytes, limit * 11 / 10, "step \(step): feeds hold \(bytes) bytes")
        }
        print("feed bytes under a \(limit)-byte limit: at most \(highest); \(refused) writes refused with 507")
        XCTAssertLessThan(refused, 40, "most writes fit")
        XCTAssertGreaterThan(highest, limit / 2, "the test never came near the limit")
    }
}
