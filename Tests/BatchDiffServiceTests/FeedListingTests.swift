import Foundation
import XCTest

/// `GET /feeds` pages: `limit` (default 1,000, at most 10,000) and `after`, with `next`
/// while more feeds follow (docs/feeds.md §8).
final class FeedListingTests: ServerTestCase {
    private func names(_ answer: [String: Any]) -> [String] {
        (answer["feeds"] as? [[String: Any]] ?? []).compactMap { $0["feed"] as? String }
    }

    func testTheListingPagesInIdOrder() throws {
        let client = try startServer().client
        let all = (0..<1005).map { String(format: "f%04d", ($0 * 7919) % 1005) }  // created out of order
        XCTAssertTrue(runConcurrently(8) { worker in
            for name in all[worker...].enumerated().filter({ $0.offset % 8 == 0 }).map(\.element) {
                XCTAssertEqual(try? client.put("/feeds/\(name)", "[1]").status, 200)
            }
        })
        let sorted = all.sorted()

        let first = assertJSON(try client.get("/feeds"))
        XCTAssertEqual(names(first), Array(sorted.prefix(1000)), "a page of 1,000 by default, in id order")
        XCTAssertEqual(first["next"] as? String, sorted[999])
        let rest = assertJSON(try client.get("/feeds?after=\(sorted[999])"))
        XCTAssertEqual(names(rest), Array(sorted.suffix(5)))
        XCTAssertNil(rest["next"], "no next on the last page")

        var seen: [String] = []
        var after: String?
        repeat {
            let page = assertJSON(try client.get("/feeds?limit=300" + (after.map { "&after=\($0)" } ?? "")))
            XCTAssertLessThanOrEqual(names(page).count, 300)
            seen += names(page)
            after = page["next"] as? String
        } while after != nil
        XCTAssertEqual(seen, sorted, "following next visits every feed once, in order")

        XCTAssertEqual(names(assertJSON(try client.get("/feeds?after=f0500x&limit=2"))), ["f0501", "f0502"], "after need not be a feed")
        XCTAssertEqual(names(assertJSON(try client.get("/feeds?limit=10000"))).count, 1005)
        XCTAssertEqual(names(assertJSON(try client.get("/feeds?after=zzz"))), [])
        for bad in ["limit=0", "limit=10001", "limit=ten", "limit=", "after=bad%20id", "after="] {
            assertProblem(try client.get("/feeds?\(bad)"), 400, "invalid_query")
        }
    }
}
