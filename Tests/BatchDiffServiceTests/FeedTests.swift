import BatchDiff
import Foundation
import XCTest

/// Feed versions, conditional requests, tokens, long polls and deletion (docs/feeds.md).
final class FeedTests: ServerTestCase {
    func testUnchangedPutCreatesNoVersion() throws {
        let client = try startServer().client
        let created = try client.put("/feeds/same", #"[{"id": 1, "a": 1, "b": [1, 2]}, "x"]"#)
        let version = assertVersion(created)
        let first = assertJSON(created)
        XCTAssertEqual(first["changed"] as? Bool, true)
        XCTAssertEqual(try decodeListBatch(first), ListBatch(rows: RowChanges(inserted: [0, 1]), oldCount: 0, newCount: 2))
        // JSON-equal (member order, 1 vs 1.0, whitespace): no new version, an empty batch.
        let again = try client.put("/feeds/same", #" [ {"b": [1.0, 2], "a": 1, "id": 1}, "x" ] "#)
        assertVersion(again, version)
        let answer = assertJSON(again)
        XCTAssertEqual(answer["changed"] as? Bool, false)
        XCTAssertEqual(try decodeListBatch(answer), ListBatch(rows: RowChanges(), oldCount: 2, newCount: 2))
        XCTAssertEqual(again.header("etag"), tag(version))
        // A real change makes the next version.
        let changedResponse = try client.put("/feeds/same", #"[{"id": 1, "a": 2, "b": [1, 2]}, "x"]"#)
        assertVersion(changedResponse, version + 1)
        let changed = assertJSON(changedResponse)
        XCTAssertEqual(try decodeListBatch(changed), ListBatch(rows: RowChanges(reloaded: [0]), oldCount: 2, newCount: 2))
        assertVersion(try client.get("/feeds/same"), version + 1)
    }

    func testETagAndIfNoneMatch() throws {
        let client = try startServer().client
        let first = assertVersion(try client.put("/feeds/tagged", "[1]"))
        let second = assertVersion(try client.put("/feeds/tagged", "[1, 2]"), first + 1)
        let response = try client.get("/feeds/tagged")
        XCTAssertEqual(response.header("etag"), tag(second))
        let object = assertJSON(response)
        XCTAssertEqual(object["feed"] as? String, "tagged")
        XCTAssertEqual(int(object["version"]), second)
        XCTAssertEqual(object["data"].map(canonicalJSON), "[1,2]")
        let notModified = try client.get("/feeds/tagged", headers: ["If-None-Match": tag(second)])
        XCTAssertEqual(notModified.status, 304)
        XCTAssertTrue(notModified.body.isEmpty)
        XCTAssertEqual(notModified.header("etag"), tag(second))
        XCTAssertEqual(try client.get("/feeds/tagged", headers: ["If-None-Match": "\(tag(first)), \(tag(second))"]).status, 304)
        XCTAssertEqual(try client.get("/feeds/tagged", headers: ["If-None-Match": "*"]).status, 304)
        XCTAssertEqual(try client.get("/feeds/tagged", headers: ["If-None-Match": tag(first)]).status, 200)
        XCTAssertEqual(try client.get("/feeds/tagged", headers: ["If-None-Match": tag(second + 18)]).status, 200)
        XCTAssertEqual(try client.get("/feeds/tagged", headers: ["If-None-Match": "\"2\""]).status, 200, "a tag naming no version")
    }

    func testIfMatch() throws {
        let client = try startServer().client
        // On a feed that does not exist yet, If-Match fails.
        assertProblem(try client.put("/feeds/cond", "[1]", headers: ["If-Match": "\"1\""]), 412, "precondition_failed")
        XCTAssertEqual(try client.get("/feeds/cond").status, 404, "a failed conditional PUT created the feed")
        let first = assertVersion(try client.put("/feeds/cond", "[1]"))
        assertVersion(try client.put("/feeds/cond", "[1, 2]", headers: ["If-Match": tag(first)]), first + 1)
        let stale = try client.put("/feeds/cond", "[1, 2, 3]", headers: ["If-Match": tag(first)])
        assertProblem(stale, 412, "precondition_failed")
        // The failed write left the feed alone.
        let current = try client.get("/feeds/cond")
        assertVersion(current, first + 1)
        XCTAssertEqual(assertJSON(current)["data"].map(canonicalJSON), "[1,2]")
        assertVersion(try client.put("/feeds/cond", "[3]", headers: ["If-Match": tag(first + 1)]), first + 2)
        assertVersion(try client.put("/feeds/cond", "[4]", headers: ["If-Match": "*"]), first + 3)
    }

    /// `If-None-Match: *` creates only, `If-Match: *` writes only an existing feed: a
    /// retried sign-up does not wipe the list (it answered 200 and replaced it).
    func testIfNoneMatchCreatesOnly() throws {
        try assertCreateOnlyWrites(try startServer().client, feed: "signup")
    }

    /// 8 writers loop read-then-conditional-write (retrying on 412): no update is lost.
    func testParallelConditionalWritersLoseNoUpdate() throws {
        let client = try startServer().client
        let first = assertVersion(try client.put("/feeds/race", #"{"sections": []}"#))
        let writers = 8
        let writesEach = 8
        let versions = Collector<Int>()
        let failures = Collector<String>()
        let finished = runConcurrently(writers, timeout: 40) { writer in
            var done = 0
            var attempts = 0
            while done < writesEach && attempts < 2000 {
                attempts += 1
                do {
                    let read = try client.get("/feeds/race")
                    guard read.status == 200, let tag = read.header("etag"), let current = int(read.object["version"]) else {
                        failures.append("writer \(writer): GET \(read.status)")
                        return
                    }
                    let body = jsonText(["sections": [["id": "w\(writer)", "items": [done], "at": current]]])
                    let write = try client.put("/feeds/race", body, headers: ["If-Match": tag])
                    switch write.status {
                    case 200:
                        let version = int(write.object["version"]) ?? -1
                        if version != current + 1 { failures.append("writer \(writer): wrote on \(current), got version \(version)") }
                        versions.append(version)
                        done += 1
                    case 412: continue
                    default:
                        failures.append("writer \(writer): PUT \(write.status) \(write.text)")
                        return
                    }
                } catch {
                    failures.append("writer \(writer): \(error)")
                    return
                }
            }
            if done < writesEach { failures.append("writer \(writer): only \(done) writes in \(attempts) attempts") }
        }
        XCTAssertTrue(finished, "the writers did not finish in time")
        XCTAssertEqual(failures.all, [])
        let all = versions.all
        XCTAssertEqual(all.count, writers * writesEach)
        XCTAssertEqual(Set(all).count, all.count, "two writes got the same version")
        XCTAssertEqual(Set(all), Set((first + 1)...(first + writers * writesEach)))
        assertVersion(try client.get("/feeds/race"), first + writers * writesEach)
    }

    /// Repeated `If-Match` or `If-None-Match` lines are one list (RFC 9110 section 5.3).
    func testRepeatedConditionalHeadersAreOneList() throws {
        let server = try startServer()
        let first = assertVersion(try server.client.put("/feeds/listed", "[1]"))
        assertVersion(try server.client.put("/feeds/listed", "[1, 2]"), first + 1)
        let write = try server.client.connect()
        try write.send("PUT /feeds/listed HTTP/1.1\r\nHost: x\r\nIf-Match: \(tag(first))\r\nIf-Match: \(tag(first + 1))\r\n"
            + "Content-Type: application/json\r\nContent-Length: 9\r\n\r\n[1, 2, 3]")
        assertVersion(try write.readResponse(), first + 2)
        let read = try server.client.connect()
        try read.send("GET /feeds/listed HTTP/1.1\r\nHost: x\r\nIf-None-Match: \(tag(first))\r\nIf-None-Match: \(tag(first + 2))\r\n\r\n")
        XCTAssertEqual(try read.readResponse().status, 304)
    }

    func testWriteToken() throws {
        let client = try startServer(["--write-token", "s3cret"]).client
        let missing = assertProblem(try client.put("/feeds/locked", "[1]"), 401, "unauthorized")
        XCTAssertNotNil(missing["detail"])
        XCTAssertEqual(try client.put("/feeds/locked", "[1]").header("www-authenticate")?.lowercased().hasPrefix("bearer"), true)
        assertProblem(try client.put("/feeds/locked", "[1]", headers: ["Authorization": "Bearer wrong"]), 403, "forbidden")
        assertProblem(try client.put("/feeds/locked", "[1]", headers: ["Authorization": "Bearer s3cre"]), 403, "forbidden")
        assertProblem(try client.put("/feeds/locked", "[1]", headers: ["Authorization": "Bearer s3cret2"]), 403, "forbidden")
        assertProblem(try client.put("/feeds/locked", "[1]", headers: ["Authorization": "Basic czNjcmV0"]), 401, "unauthorized")
        XCTAssertEqual(try client.get("/feeds/locked").status, 404, "a refused write stored the feed (or reads need the write token)")
        let stored = assertVersion(try client.put("/feeds/locked", "[1]", headers: ["Authorization": "Bearer s3cret"]))
        // RFC 9110: one or more spaces after the scheme.
        assertVersion(try client.put("/feeds/locked", "[1, 2]", headers: ["Authorization": "Bearer   s3cret"]), stored + 1)
        // Reads need no token when only a write token is set.
        let open = "reads need no token when only --write-token is set (openapi: only PUT and DELETE need it)"
        XCTAssertEqual(try client.get("/feeds/locked").status, 200, open)
        XCTAssertEqual(try client.get("/feeds/locked/changes?since=0").status, 200, open)
        XCTAssertEqual(try client.post("/diff", #"{"old": [], "new": []}"#).status, 200, open)
        // DELETE is a write.
        assertProblem(try client.delete("/feeds/locked"), 401, "unauthorized")
        assertProblem(try client.delete("/feeds/locked", headers: ["Authorization": "Bearer nope"]), 403, "forbidden")
        XCTAssertEqual(try client.delete("/feeds/locked", headers: ["Authorization": "Bearer s3cret"]).status, 204)
    }

    func testReadToken() throws {
        let client = try startServer(["--write-token", "w", "--read-token", "r"]).client
        XCTAssertEqual(try client.put("/feeds/private", "[1]", headers: ["Authorization": "Bearer w"]).status, 200)
        assertProblem(try client.get("/feeds/private"), 401, "unauthorized")
        assertProblem(try client.get("/feeds/private", headers: ["Authorization": "Bearer x"]), 403, "forbidden")
        XCTAssertEqual(try client.get("/feeds/private", headers: ["Authorization": "Bearer r"]).status, 200)
        XCTAssertEqual(try client.get("/feeds/private", headers: ["Authorization": "Bearer w"]).status, 200, "the write token reads too")
        assertProblem(try client.put("/feeds/private", "[2]", headers: ["Authorization": "Bearer r"]), 403, "forbidden")
        assertProblem(try client.post("/diff", #"{"old": [], "new": []}"#), 401, "unauthorized")
        XCTAssertEqual(try client.get("/healthz").status, 200, "health needs no token")
    }

    /// A long poll at the latest version is answered by the next PUT, at once.
    func testLongPollIsWokenByAPut() throws {
        let client = try startServer().client
        let first = assertVersion(try client.put("/feeds/live", #"[{"id": 1, "t": "a"}, {"id": 2, "t": "b"}]"#))
        let answer = Collector<(HTTPResult, Date)>()
        let poll = Thread {
            if let response = try? client.get("/feeds/live/changes?since=\(first)&wait=20", timeout: 25) { answer.append((response, Date())) }
        }
        poll.start()
        XCTAssertTrue(eventually(timeout: 5) {
            (try? client.get("/metrics").text.contains("batchdiff_long_polls_parked 1")) ?? false
        }, "the long poll did not park")
        XCTAssertTrue(answer.all.isEmpty, "the long poll was answered before any new version")
        let written = Date()
        assertVersion(try client.put("/feeds/live", #"[{"id": 2, "t": "b"}, {"id": 1, "t": "a2"}, {"id": 3, "t": "c"}]"#), first + 1)
        XCTAssertTrue(eventually(timeout: 5) { !answer.all.isEmpty }, "the long poll was not woken")
        guard let (response, at) = answer.all.first else { return }
        XCTAssertLessThan(at.timeIntervalSince(written), 0.5, "the long poll was answered late")
        let object = assertJSON(response)
        XCTAssertEqual(int(object["from"]), first)
        XCTAssertEqual(int(object["to"]), first + 1)
        let old = listElements(parseJSON(#"[{"id": 1, "t": "a"}, {"id": 2, "t": "b"}]"#))
        let new = listElements(parseJSON(#"[{"id": 2, "t": "b"}, {"id": 1, "t": "a2"}, {"id": 3, "t": "c"}]"#))
        XCTAssertEqual(try decodeListBatch(object).apply(to: old, values: decodeListValues(object)), new)
    }

    /// A long poll with nothing new answers after about `wait` seconds with an empty batch;
    /// one behind the latest is answered at once.
    func testLongPollTimesOutWithAnEmptyBatch() throws {
        let client = try startServer().client
        let first = assertVersion(try client.put("/feeds/quiet", "[1, 2, 3]"))
        let started = Date()
        let response = try client.get("/feeds/quiet/changes?since=\(first)&wait=1", timeout: 10)
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertGreaterThan(elapsed, 0.9, "answered before the wait")
        XCTAssertLessThan(elapsed, 2.5, "answered long after the wait")
        let object = assertJSON(response)
        XCTAssertEqual(int(object["from"]), first)
        XCTAssertEqual(int(object["to"]), first)
        XCTAssertEqual(try decodeListBatch(object), ListBatch(rows: RowChanges(), oldCount: 3, newCount: 3))
        // Behind the latest: no waiting.
        assertVersion(try client.put("/feeds/quiet", "[1, 2]"), first + 1)
        let quick = Date()
        let behind = assertJSON(try client.get("/feeds/quiet/changes?since=\(first)&wait=10"))
        XCTAssertLessThan(Date().timeIntervalSince(quick), 0.5)
        XCTAssertEqual(try decodeListBatch(behind), ListBatch(rows: RowChanges(deleted: [2]), oldCount: 3, newCount: 2))
        for bad in ["abc", "-1", "1.5"] {
            assertProblem(try client.get("/feeds/quiet/changes?since=\(first + 1)&wait=\(bad)"), 400, "invalid_query")
        }
    }

    func testDeleteFeed() throws {
        let client = try startServer().client
        let gone = assertVersion(try client.put("/feeds/gone", "[1]"))
        let kept = assertVersion(try client.put("/feeds/kept", "[1]"))
        let listed = assertJSON(try client.get("/feeds"))
        let feeds = (listed["feeds"] as? [[String: Any]] ?? []).map { "\($0["feed"] ?? "")@\(int($0["version"]) ?? -1)" }
        XCTAssertEqual(Set(feeds), ["gone@\(gone)", "kept@\(kept)"])
        let deleted = try client.delete("/feeds/gone")
        XCTAssertEqual(deleted.status, 204)
        XCTAssertTrue(deleted.body.isEmpty)
        assertProblem(try client.get("/feeds/gone"), 404, "feed_not_found")
        assertProblem(try client.get("/feeds/gone/changes?since=0"), 404, "feed_not_found")
        assertProblem(try client.delete("/feeds/gone"), 404, "feed_not_found")
        let remaining = (assertJSON(try client.get("/feeds"))["feeds"] as? [[String: Any]] ?? []).compactMap { $0["feed"] as? String }
        XCTAssertEqual(remaining, ["kept"])
        // A new feed of the same name starts a new series, above the old one's versions.
        XCTAssertGreaterThan(assertVersion(try client.put("/feeds/gone", "[2]")), gone)
    }

    /// A long poll parked on a feed that is deleted learns it with 404.
    func testDeletingAFeedAnswersItsLongPolls() throws {
        let client = try startServer().client
        let first = assertVersion(try client.put("/feeds/doomed", "[1]"))
        let answer = Collector<HTTPResult>()
        let poll = Thread {
            if let response = try? client.get("/feeds/doomed/changes?since=\(first)&wait=20", timeout: 25) { answer.append(response) }
        }
        poll.start()
        XCTAssertTrue(eventually(timeout: 5) {
            (try? client.get("/metrics").text.contains("batchdiff_long_polls_parked 1")) ?? false
        }, "the long poll did not park")
        XCTAssertEqual(try client.delete("/feeds/doomed").status, 204)
        XCTAssertTrue(eventually(timeout: 3) { !answer.all.isEmpty }, "the parked long poll was not answered")
        if let response = answer.all.first { assertProblem(response, 404, "feed_not_found") }
    }

    /// Past `--max-feed-memory`, old versions go (410 for them) but never the latest.
    func testMemoryLimitEvictsOldVersionsButNeverTheLatest() throws {
        let client = try startServer(["--max-feed-memory", "30000", "--max-versions", "1000"]).client
        var latest: [Any] = []
        var first = 0
        for version in 1...30 {
            latest = (0..<40).map { ["id": $0, "text": String(repeating: "v\(version)-", count: 10)] as [String: Any] }
            let written = assertVersion(try client.put("/feeds/big", jsonText(latest)), version == 1 ? nil : first + version - 1)
            if version == 1 { first = written }
        }
        assertVersionGone(try client.get("/feeds/big/changes?since=\(first)"), latest: first + 29)
        let whole = assertJSON(try client.get("/feeds/big"))
        XCTAssertEqual(whole["data"].map(canonicalJSON), canonicalJSON(latest))
        let fresh = assertJSON(try client.get("/feeds/big/changes?since=0"))
        XCTAssertEqual(try decodeListBatch(fresh).apply(to: [], values: decodeListValues(fresh)), listElements(latest))
        XCTAssertLessThan(try client.metric("batchdiff_feed_versions") ?? 1000, 30, "no version was evicted")
    }

    /// The bytes feeds hold are kept as a running total: writes, cached answers, trimming,
    /// eviction and deletion all add up, and deleting every feed brings it back to zero.
    func testFeedBytesAddUpAndReturnToZero() throws {
        let client = try startServer(["--max-versions", "3"]).client
        func bytes() throws -> Int? { try client.metric("batchdiff_feed_bytes") }
        XCTAssertEqual(try bytes(), 0)
        var generator = SnapshotGenerator(seed: 7)
        for feed in ["a", "b", "c"] {
            var snapshot: [Any] = []
            for _ in 0..<6 {
                snapshot = generator.nextList(after: snapshot)
                XCTAssertEqual(try client.put("/feeds/\(feed)", jsonText(snapshot)).status, 200)
                XCTAssertEqual(try client.get("/feeds/\(feed)/changes?since=0").status, 200)
            }
        }
        XCTAssertGreaterThan(try XCTUnwrap(try bytes()), 0)
        for feed in ["a", "b", "c"] { XCTAssertEqual(try client.delete("/feeds/\(feed)").status, 204) }
        XCTAssertEqual(try bytes(), 0, "bytes left counted after every feed was deleted")
    }

    /// A new feed that cannot fit even with every other feed cut down to its latest is a
    /// 507, and the refused write costs the other feeds nothing.
    func testANewFeedThatCannotFitIsRefusedWithoutEvictingOthers() throws {
        let client = try startServer(["--max-feed-memory", "20000"]).client
        let first = assertVersion(try client.put("/feeds/small", jsonText([1])))
        for version in 2...5 {
            assertVersion(try client.put("/feeds/small", jsonText(Array(1...version))), first + version - 1)
        }
        let huge = "[" + (0..<1500).map { #"{"id":\#($0),"t":"\#(String(repeating: "x", count: 10))"}"# }.joined(separator: ",") + "]"
        let refused = assertProblem(try client.put("/feeds/huge", huge), 507, "feed_storage_full")
        XCTAssertTrue((refused["detail"] as? String ?? "").contains("huge"), "\(refused)")
        assertProblem(try client.get("/feeds/huge"), 404, "feed_not_found")
        let changes = assertJSON(try client.get("/feeds/small/changes?since=\(first)"))
        XCTAssertEqual(try decodeListBatch(changes).apply(to: listElements([1]), values: decodeListValues(changes)),
                       listElements([1, 2, 3, 4, 5]), "the first version of the other feed is still there")
    }

    func testFeedKeepsItsShapeAndIdKey() throws {
        let client = try startServer().client
        let shaped = assertVersion(try client.put("/feeds/shaped", "[1]"))
        assertProblem(try client.put("/feeds/shaped", #"{"sections": []}"#), 422, "invalid_shape")
        assertProblem(try client.put("/feeds/shaped", #"{"not": "a collection"}"#), 422, "invalid_shape")
        assertProblem(try client.put("/feeds/shaped", "[1,"), 400, "malformed_json")
        XCTAssertEqual(int(assertJSON(try client.get("/feeds/shaped"))["version"]), shaped, "a refused PUT made a version")
        // idKey set on the first PUT.
        let keyed = assertVersion(try client.put("/feeds/keyed?idKey=key", #"[{"key": "a", "v": 1}, {"key": "b"}]"#))
        // With "key" as the identity, a changed is a reload (not a delete plus an insert).
        let updated = try client.put("/feeds/keyed", #"[{"key": "a", "v": 2}, {"key": "b"}]"#)
        assertVersion(updated, keyed + 1)
        let update = assertJSON(updated)
        XCTAssertEqual(try decodeListBatch(update), ListBatch(rows: RowChanges(reloaded: [0]), oldCount: 2, newCount: 2))
        assertProblem(try client.put("/feeds/keyed?idKey=id", "[]"), 422, "invalid_shape")
        // Invalid feed ids.
        assertProblem(try client.put("/feeds/bad%20id", "[]"), 400, "invalid_feed_id")
        assertProblem(try client.put("/feeds/" + String(repeating: "a", count: 129), "[]"), 400, "invalid_feed_id")
    }

    /// A `%00` in the path or the query is refused, never read as the end of the text (which
    /// would make `/feeds/victim%00junk` a request about feed `victim`).
    func testAnEncodedNULIsRefusedAndChangesNothing() throws {
        let client = try startServer().client
        let victim = assertVersion(try client.put("/feeds/victim", "[1]"))
        assertProblem(try client.put("/feeds/victim%00.bad%20id", "[2]"), 400, "invalid_feed_id")
        assertProblem(try client.delete("/feeds/victim%00junk"), 400, "invalid_feed_id")
        assertProblem(try client.get("/feeds/%00x"), 400, "invalid_feed_id")
        assertProblem(try client.get("/feeds/victim/changes?since=\(victim)%002"), 400, "invalid_query")
        assertProblem(try client.put("/feeds/victim?idKey=id%00x", "[3]"), 422, "invalid_shape")
        let feed = assertJSON(try client.get("/feeds/victim"))
        XCTAssertEqual(int(feed["version"]), victim)
        XCTAssertEqual(feed["data"].map(canonicalJSON), "[1]")
        // Other escapes are still decoded.
        XCTAssertEqual(try client.get("/feeds/%76ictim").status, 200)
        // The version's first digit escaped: %3d is the digit d.
        let since = "%3" + String(victim)
        XCTAssertEqual(try client.get("/feeds/victi%6d/changes?since=\(since)").status, 200, "lowercase hex, and in the query")
        assertProblem(try client.get("/feeds/victim%7"), 400, "invalid_feed_id")
        assertProblem(try client.get("/feeds/victim%zz"), 400, "invalid_feed_id")
    }
}
