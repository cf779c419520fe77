import Foundation
import XCTest

/// Many clients asking the same question (same feed, same since, same latest) cost one diff.
final class FeedAnswerSharingTests: ServerTestCase {
    func testConcurrentIdenticalQuestionsCostOneDiff() throws {
        let client = try startServer().client
        let items = (0..<2000).map { #"{"id":\#($0),"v":0}"# }
        let first = assertVersion(try client.put("/feeds/shared", "[" + items.joined(separator: ",") + "]"))
        let changed = items.enumerated().map { $0.offset % 10 == 0 ? #"{"id":\#($0.offset),"v":1}"# : $0.element }
        assertVersion(try client.put("/feeds/shared", "[" + changed.joined(separator: ",") + "]"), first + 1)

        // Clients at the first version find their answer computed with the write.
        let computedAfterWrites = try XCTUnwrap(try client.metric("batchdiff_feed_answers_computed_total"))
        XCTAssertEqual(try client.get("/feeds/shared/changes?since=\(first)").status, 200)
        XCTAssertEqual(try client.metric("batchdiff_feed_answers_computed_total"), computedAfterWrites, "since=first was computed with the write")

        // Sixteen new clients ask for everything at once: one diff, fifteen reuses.
        let reusedBefore = try XCTUnwrap(try client.metric("batchdiff_feed_answers_reused_total"))
        let answers = Collector<String>()
        let group = DispatchGroup()
        for _ in 0..<16 {
            group.enter()
            Thread {
                if let response = try? client.get("/feeds/shared/changes?since=0"), response.status == 200 { answers.append(response.text) }
                group.leave()
            }.start()
        }
        XCTAssertEqual(group.wait(timeout: .now() + 20), .success)
        XCTAssertEqual(answers.all.count, 16)
        XCTAssertEqual(Set(answers.all).count, 1, "every client got the same answer")
        XCTAssertEqual(try client.metric("batchdiff_feed_answers_computed_total"), computedAfterWrites + 1, "one diff for sixteen identical questions")
        XCTAssertEqual(try client.metric("batchdiff_feed_answers_reused_total"), reusedBefore + 15)

        // A new version makes the question new again: one more diff for it.
        assertVersion(try client.put("/feeds/shared", "[" + items.joined(separator: ",") + "]"), first + 2)
        for _ in 0..<3 { XCTAssertEqual(try client.get("/feeds/shared/changes?since=0").status, 200) }
        XCTAssertEqual(try client.metric("batchdiff_feed_answers_computed_total"), computedAfterWrites + 3, "the write's own answer and one for since=0")
    }

    func testTheWritesAnswerOutlivesTrimmingToMaxVersions() throws {
        let client = try startServer(["--max-versions", "2"]).client
        let first = assertVersion(try client.put("/feeds/trimmed", jsonText([1])))
        for version in 2...4 {
            assertVersion(try client.put("/feeds/trimmed", jsonText(Array(1...version))), first + version - 1)
        }
        // The fourth version's write trimmed the second away, but clients at the third
        // still find their answer made with the write.
        let computed = try XCTUnwrap(try client.metric("batchdiff_feed_answers_computed_total"))
        let reused = try XCTUnwrap(try client.metric("batchdiff_feed_answers_reused_total"))
        let answer = assertJSON(try client.get("/feeds/trimmed/changes?since=\(first + 2)"))
        XCTAssertEqual(int(answer["to"]), first + 3)
        XCTAssertEqual(try client.metric("batchdiff_feed_answers_computed_total"), computed, "since=first+2 was computed with the write")
        XCTAssertEqual(try client.metric("batchdiff_feed_answers_reused_total"), reused + 1)
        assertVersionGone(try client.get("/feeds/trimmed/changes?since=\(first + 1)"), latest: first + 3)
    }
}
