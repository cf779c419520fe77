import Foundation
import XCTest

/// Parked long polls whose clients vanish free their connections within seconds, so they
/// cannot be used to fill the server's connection limit (docs/feeds.md §6).
final class VanishingClientTests: ServerTestCase {
    func testParkedLongPollsOfVanishedClientsFreeTheirSlots() throws {
        let server = try startServer(["--max-connections", "400"])
        let client = server.client
        let first = assertVersion(try client.put("/feeds/phone", "[1]"))
        let poll = HTTPClient.requestBytes("GET", "/feeds/phone/changes?since=\(first)&wait=60", body: nil, headers: [:])

        // 300 clients park a long poll, then lose their network (a reset).
        let vanishing = try (0..<300).map { _ in
            let connection = try client.connect()
            try connection.send(poll)
            return connection
        }
        XCTAssertTrue(eventually(timeout: 10) { (try? client.metric("batchdiff_long_polls_parked")) == 300 }, "the long polls did not park")
        for connection in vanishing { connection.reset() }
        XCTAssertTrue(eventually(timeout: 5) { (try? client.metric("batchdiff_long_polls_parked")) == 0 },
                      "long polls of vanished clients are still parked")

        // Their slots are free: 300 new polls park, the server still serves, a PUT answers them all.
        let polls = try (0..<300).map { _ in
            let connection = try client.connect()
            try connection.send(poll)
            return connection
        }
        XCTAssertTrue(eventually(timeout: 10) { (try? client.metric("batchdiff_long_polls_parked")) == 300 }, "the new long polls did not all park")
        XCTAssertEqual(try client.get("/healthz").status, 200)
        assertVersion(try client.put("/feeds/phone", "[1, 2]"), first + 1)
        for connection in polls {
            let response = try connection.readResponse(timeout: 10)
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(int(response.object["to"]), first + 1)
        }
    }
}
