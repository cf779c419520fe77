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

    private func bytesInUse() -> Int { Int(mallinfo2().uordblks) }

    func testTheByteCountMatchesTheBytesHeld() async throws {
        for (count, versions) in [(20_000, 1), (20_000, 8), (2_000, 40)] {
            var feeds: Feeds? = Feeds(store: MemoryFeedStore(maxVersions: 64, maxBytes: 1 << 30), maxFeedMemory: 1 << 30)
            for version in 0..<versions {
                _ = try await feeds!.write(snapshot(count, version: version), to: FeedID("memory"), idKey: nil, condition: .none)
            }
            _ = try await feeds!.changes(of: FeedID("memory"), since: 0, wait: .zero)
            let counted = feeds!.statistics.bytes
            // What the feeds held is what the allocator gets back when they go (once the
            // tasks of the calls above have ended on every thread).
            try await Task.sleep(for: .milliseconds(100))
            let withFeeds = bytesInUse()
            feeds = nil
            try await Task.sleep(for: .milliseconds(100))  // tasks that held them end
            let held = withFeeds - bytesInUse()
            let ratio = Double(counted) / Double(held)
            print("\(versions) versions of \(count) rows: counted \(counted) bytes, allocator \(held): \(String(format: "%.2f", ratio))")
            XCTAssertTrue((0.9...1.1).contains(ratio), "\(versions) versions of \(count) rows: counted \(counted) bytes, held \(held)")
        }
    }
}
