import Foundation
import XCTest

/// Many clients asking the same question (same feed, same since, same latest) cost one diff.
final class FeedAnswerSharingTests: ServerTestCase {
    func testConcurrentIdenticalQuestionsCostOneDiff() throws {
        let client = try startServer().client
        let items = (0..<2000).map { #"{"id":\#($0),"v":0}"# }
        let first = assertVersion(try client.put("/feeds/shared", "[" + items.joined(separator: ",") + "]"))
        XCTAssertEqual(try client.get("/feeds/shared").status, 200, "a client follows the feed")
        let changed = items.enumerated().map { $0.offset % 10 == 0 ? #"{"id":\#($0.offset),"v":1}"# : $0.element }
        assertVersion(try client.put("/feeds/shared", "[" + changed.joined(separator: ",") + "]"), first + 1)

        // Clients at the first version (one asked about it) find their answer computed with the write.
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
        XCTAssertEqual(try client.get("/feeds/shared").status, 200)
        assertVersion(try client.put("/feeds/shared", "[" + items.joined(separator: ",") + "]"), first + 2)
        for _ in 0..<3 { XCTAssertEqual(try client.get("/feeds/shared/changes?since=0").status, 200) }
        XCTAssertEqual(try client.metric("batchdiff_feed_answers_computed_total"), computedAfterWrites + 3, "the write's own answer and one for since=0")
    }

    func testTheWritesAnswerOutlivesTrimmingToMaxVersions() throws {
        let client = try startServer(["--max-versions", "2"]).client
        let first = assertVersion(try client.put("/feeds/trimmed", jsonText([1])))
        for version in 2...4 {
            XCTAssertEqual(try client.get("/feeds/trimmed").status, 200, "a client follows the feed")
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

    /// A write makes the answer for clients one version behind only when some follow the
    /// feed: a long poll waits on it, or a client asked about the version it replaces. A
    /// feed nobody reads (most of a million per-user feeds) keeps no answer.
    func testAWriteKeepsAnAnswerOnlyForAFollowedFeed() throws {
        let client = try startServer().client
        let first = assertVersion(try client.put("/feeds/unread", jsonText([1, 2, 3])))
        assertVersion(try client.put("/feeds/unread", jsonText([3, 2, 1])), first + 1)
        var computed = try XCTUnwrap(try client.metric("batchdiff_feed_answers_computed_total"))
        XCTAssertEqual(try client.get("/feeds/unread/changes?since=\(first)").status, 200)
        XCTAssertEqual(try client.metric("batchdiff_feed_answers_computed_total"), computed + 1, "no write kept it: computed when asked")

        // A long poll parked on the feed: the write makes its answer.
        let parked = DispatchSemaphore(value: 0)
        let polled = Collector<Int>()
        Thread {
            let answer = try? client.get("/feeds/unread/changes?since=\(first + 1)&wait=20")
            polled.append(answer.flatMap { try? JSONSerialization.jsonObject(with: Data($0.text.utf8)) as? [String: Any] }.flatMap { int($0["to"]) } ?? -1)
            parked.signal()
        }.start()
        XCTAssertTrue(eventually(timeout: 10) { (try? client.metric("batchdiff_long_polls_parked")) == 1 })
        computed = try XCTUnwrap(try client.metric("batchdiff_feed_answers_computed_total"))
        let reused = try XCTUnwrap(try client.metric("batchdiff_feed_answers_reused_total"))
        assertVersion(try client.put("/feeds/unread", jsonText([1, 2, 3, 4])), first + 2)
        XCTAssertEqual(parked.wait(timeout: .now() + 20), .success)
        XCTAssertEqual(polled.all, [first + 2])
        XCTAssertEqual(try client.metric("batchdiff_feed_answers_computed_total"), computed + 1, "the write's answer")
        XCTAssertEqual(try client.metric("batchdiff_feed_answers_reused_total"), reused + 1, "the long poll's")
    }

    /// `maxChanges` only decides how a computed batch is written: any number of distinct
    /// values on one question cost one diff, in every format (each distinct value computed
    /// the whole diff again, seconds of CPU for a 100-byte request).
    func testMaxChangesIsAppliedAfterTheAnswerIsComputed() throws {
        let client = try startServer().client
        let items = (0..<3000).map { #"{"id":\#($0),"v":0}"# }
        let first = assertVersion(try client.put("/feeds/m", "[" + items.joined(separator: ",") + "]"))
        XCTAssertEqual(try client.get("/feeds/m").status, 200, "a client follows the feed")
        assertVersion(try client.put("/feeds/m", "[" + items.reversed().joined(separator: ",") + "]"), first + 1)
        for format in ["batch", "steps", "json-patch"] {
            let computed = try XCTUnwrap(try client.metric("batchdiff_feed_answers_computed_total"))
            var bodies: [String: Set<String>] = [:]
            for maxChanges in [5_000_000, 5_000_001, 5_000_002, 0, 1, 2] {
                let response = try client.get("/feeds/m/changes?since=0&format=\(format)&maxChanges=\(maxChanges)")
                XCTAssertEqual(response.status, 200, "\(format), maxChanges \(maxChanges)")
                bodies[maxChanges >= 3000 ? "full" : "reload", default: []].insert(response.text)
            }
            XCTAssertEqual(try client.metric("batchdiff_feed_answers_computed_total"), computed + 1, "\(format): one diff for six maxChanges")
            XCTAssertEqual(bodies["full"]?.count, 1, "\(format): identical bodies")
            XCTAssertEqual(bodies["reload"]?.count, 1, "\(format): identical reloads")
            let reload = try XCTUnwrap(bodies["reload"]?.first)
            XCTAssertTrue(reload.contains(#""reload":true"#), reload.prefix(200).description)
            XCTAssertEqual(try client.get("/feeds/m/changes?since=0&format=\(format)").text, bodies["full"]?.first, "as without maxChanges")
        }
        // The answer computed with the write serves every maxChanges of its question too.
        let computed = try XCTUnwrap(try client.metric("batchdiff_feed_answers_computed_total"))
        for maxChanges in [1, 10, 100_000] {
            XCTAssertEqual(try client.get("/feeds/m/changes?since=\(first)&maxChanges=\(maxChanges)").status, 200)
        }
        XCTAssertEqual(try client.metric("batchdiff_feed_answers_computed_total"), computed)
        // A first client whose maxChanges the batch passes does not take the changed members
        // out of the answer the next client of the question gets (it did, kept that way).
        let third = assertVersion(try client.put("/feeds/m", "[" + items.reversed().map { $0.replacingOccurrences(of: #""v":0"#, with: #""v":1"#) }.joined(separator: ",") + "]"), first + 2)
        let reload = assertJSON(try client.get("/feeds/m/changes?since=\(first + 1)&changedMembers=true&maxChanges=0"))
        XCTAssertEqual(reload["reload"] as? Bool, true)
        let named = assertJSON(try client.get("/feeds/m/changes?since=\(first + 1)&changedMembers=true"))
        XCTAssertEqual(int(named["to"]), third)
        XCTAssertEqual(((named["rows"] as? [String: Any])?["changedMembers"] as? [[String]])?.count, 3000, "every reloaded row's changed members")
    }

    /// Slow readers of a big feed share its answer (and its gzip form) instead of a copy
    /// each: twenty clients reading 512 bytes every 2 s from an 8 MB feed grew the process
    /// by 320 MB. Each gets its 200, and a reader slower than `--min-send-rate` is cut off.
    func testSlowReadersShareTheAnswerAndAreCutOffBelowTheMinimumRate() throws {
        let server = try startServer(["--min-send-rate", "20000", "--connection-timeout", "120"])
        let client = server.client
        let items = (0..<110_000).map { #"{"id":"item-\#($0)","title":"Title of row \#($0) in a big feed","n":\#($0)}"# }
        let text = "[" + items.joined(separator: ",") + "]"
        XCTAssertGreaterThan(text.utf8.count, 8_000_000)
        assertVersion(try client.put("/feeds/big", text))
        // One read first: the answer and its gzip form are made once.
        XCTAssertEqual(try client.get("/feeds/big", timeout: 30).status, 200)
        XCTAssertEqual(try client.get("/feeds/big", headers: ["Accept-Encoding": "gzip"], timeout: 30).status, 200)
        let before = try server.residentBytes()
        // A request is counted once its exchange ends, which may be just after its client
        // has read the answer: count from when both reads are.
        XCTAssertTrue(eventually(timeout: 10) { (try? client.requestsAnswered("GET", "/feeds/{id}")) == 2 })
        let answered = try client.requestsAnswered("GET", "/feeds/{id}")
        var readers: [HTTPConnection] = []
        for index in 0..<20 {
            let connection = try client.connect(receiveBuffer: 4096)
            try connection.send("GET /feeds/big HTTP/1.1\r\nHost: x\r\n" + (index % 2 == 0 ? "Accept-Encoding: gzip\r\n" : "") + "\r\n")
            readers.append(connection)
        }
        for (index, reader) in readers.enumerated() {
            XCTAssertTrue(try reader.receive(upTo: 512, timeout: 10).starts(with: Array("HTTP/1.1 200".utf8)), "reader \(index) gets its 200")
        }
        Thread.sleep(forTimeInterval: 2)
        let grown = try server.residentBytes() - before
        XCTAssertLessThan(grown, 64 << 20, "20 slow readers grew the server by \(grown >> 20) MB")
        // A steady reader beside them takes about 60,000 bytes a second, above the floor.
        let steady = try client.connect(receiveBuffer: 4096)
        try steady.send("GET /feeds/big HTTP/1.1\r\nHost: x\r\n\r\n")
        var steadyBytes = 0
        func readSteadily(for seconds: Double) {
            let until = Date().addingTimeInterval(seconds)
            while Date() < until, let bytes = try? steady.receive(upTo: 4096, timeout: 1), !bytes.isEmpty {
                steadyBytes += bytes.count
                Thread.sleep(forTimeInterval: 0.06)
            }
        }
        // Reading 512 bytes every 2 s, far below 20,000 a second: cut off within two windows.
        let started = Date()
        var finished = 0
        while finished < 20 && Date().timeIntervalSince(started) < 75 {
            readSteadily(for: 2)
            for reader in readers { _ = try? reader.receive(upTo: 512, timeout: 0.05) }
            finished = try client.requestsAnswered("GET", "/feeds/{id}") - answered
        }
        XCTAssertEqual(finished, 20, "the slow readers were cut off within 75 s")
        XCTAssertGreaterThan(Date().timeIntervalSince(started), 25, "not before a window of 30 s")
        // The steady reader was not: it still receives, well past the slow ones' window.
        let sofar = steadyBytes
        readSteadily(for: 3)
        XCTAssertGreaterThan(steadyBytes, sofar, "the steady reader still receives after \(Date().timeIntervalSince(started)) s")
        XCTAssertGreaterThan(Double(steadyBytes) / Date().timeIntervalSince(started), 20_000, "it read above the floor")
        XCTAssertEqual(try client.get("/healthz").status, 200)
    }
}
