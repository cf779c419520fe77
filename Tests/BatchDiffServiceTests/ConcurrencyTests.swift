import BatchDiff
import Foundation
import XCTest

/// Many clients at once, each checking that it gets its own answer.
final class ConcurrencyTests: ServerTestCase {
    /// 64 threads each POST a diff of their own (different sizes, different changes) and
    /// check the answer is exactly the batch of their diff.
    func testSixtyFourConcurrentClientsEachGetTheirOwnBatch() throws {
        let server = try startServer()
        let client = server.client
        let failures = Collector<String>()
        let finished = runConcurrently(64) { client_ in
            // Client i: old is i+5 distinct strings; one is deleted, one inserted, one changed.
            let count = client_ + 5
            let old = (0..<count).map { ["id": "c\(client_)-\($0)", "v": 0] as [String: Any] }
            var new = old
            let deleted = client_ % count
            let changed = (client_ * 7 + 3) % count
            new[changed]["v"] = client_ + 1
            new.remove(at: deleted)
            let inserted = (client_ * 3) % (new.count + 1)
            new.insert(["id": "c\(client_)-new", "v": client_], at: inserted)
            let body = jsonText(["old": old, "new": new])
            // The batch: the delete, the insert, and a reload unless the changed row is the deleted one.
            let expected = ListBatch(
                rows: RowChanges(deleted: [deleted], inserted: [inserted], reloaded: changed == deleted ? [] : [changed]),
                oldCount: count, newCount: count
            )
            for round in 0..<3 {
                do {
                    let response = try client.post("/diff", body)
                    guard response.status == 200 else {
                        failures.append("client \(client_) round \(round): status \(response.status) \(response.text)")
                        return
                    }
                    let batch = try decodeListBatch(response.object)
                    if batch != expected {
                        failures.append("client \(client_) round \(round): got \(batch), expected \(expected)")
                    }
                } catch {
                    failures.append("client \(client_) round \(round): \(error)")
                }
            }
        }
        XCTAssertTrue(finished, "the clients did not finish in time")
        XCTAssertEqual(failures.all, [])
        // Every exchange is counted (the count lands when the exchange completes).
        let line = #"batchdiff_requests_total{route="/diff",method="POST",status="200"} 192"#
        XCTAssertTrue(eventually(timeout: 2) { (try? client.get("/metrics").text.contains(line)) ?? false },
                      (try? client.get("/metrics").text) ?? "no metrics")
    }
}
