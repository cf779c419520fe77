import BatchDiffFeeds
import CGlibcExtras
import Foundation
import XCTest

/// What the feeds count as held is what they hold: the feed core's byte count against the
/// allocator's own count of bytes in use, and the limit it keeps.
final class FeedMemoryTests: XCTestCase {
    /// `count` objects like an app's rows, each version changing one in ten.
    private func snapshot(_ count: Int, version: Int) -> [UInt8] {
        let rows = (0..<count).map { index in
            #"{"id":\#(index),"title":"Row number \#(index)","price":\#(index % 10 == version % 10 ? version : 0),"tags":["a","b"]}"#
        }
        return Array(("[" + rows.joined(separator: ",") + "]").utf8)
    }

    /// The allocator's bytes in use once they stop changing (the tasks of the calls before
    /// have ended on every thread): the same over 20 readings 1 ms apart, within 5 s.
    private func settledBytesInUse() -> Int {
        let deadline = ContinuousClock.now + .seconds(5)
        var last = Int(mallinfo2().uordblks)
        var unchanged = 0
        while unchanged < 20, ContinuousClock.now < deadline {
            usleep(1_000)  // not a task's sleep, which allocates
            let now = Int(mallinfo2().uordblks)
            unchanged = now == last ? unchanged + 1 : 0
            last = now
        }
        return last
    }

    func testTheByteCountMatchesTheBytesHeld() async throws {
        for (count, versions) in [(20_000, 1), (20_000, 8), (2_000, 40)] {
            var feeds: Feeds? = Feeds(store: MemoryFeedStore(maxVersions: 64, maxBytes: 1 << 30), maxFeedMemory: 1 << 30)
            for version in 0..<versions {
                _ = try await feeds!.write(snapshot(count, version: version), to: FeedID("memory"), idKey: nil, condition: .none)
            }
            _ = try await feeds!.changes(of: FeedID("memory"), since: 0, wait: .zero)
            let counted = feeds!.statistics.bytes
            // What the feeds held is what the allocator gets back when they go.
            let withFeeds = settledBytesInUse()
            feeds = nil
            let held = withFeeds - settledBytesInUse()
            let ratio = Double(counted) / Double(held)
            print("\(versions) versions of \(count) rows: counted \(counted) bytes, allocator \(held): \(String(format: "%.2f", ratio))")
            XCTAssertTrue((0.9...1.1).contains(ratio), "\(versions) versions of \(count) rows: counted \(counted) bytes, held \(held)")
        }
    }
}
