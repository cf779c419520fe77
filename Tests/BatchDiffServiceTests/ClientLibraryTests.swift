import BatchDiff
import BatchDiffClient
import BatchDiffURLSession
import Foundation
import Synchronization
import TestSupport
import XCTest

/// A feed's collection as the client library reads it from JSON text.
func collection(_ text: String) throws -> FeedCollection<JSON, JSON> {
    try JSONDecoder().decode(FeedCollection<JSON, JSON>.self, from: Data(text.utf8))
}

/// The client library against a real server: every `changes` answer of random versions
/// applied, the follower through 503s and network errors, over both transports.
final class ClientLibraryTests: ServerTestCase {
    private typealias Collection = FeedCollection<JSON, JSON>

    /// From every version (and from nothing), the answer applied to what a client holds is
    /// the latest version, for lists and sections alike.
    func testEveryAnswerOfRandomVersionsAppliesToTheLatest() throws {
        let server = try startServer(["--max-versions", "64"])
        let client = server.client
        for sectioned in [false, true] {
            let feed = sectioned ? "sections" : "list"
            var generator = SnapshotGenerator(seed: sectioned ? 31 : 17)
            var snapshot: Any = sectioned ? ["sections": []] as [String: Any] : [] as [Any]
            var held: [(version: Int, collection: Collection)] = []
            for _ in 0..<24 {
                snapshot = sectioned ? generator.nextSectioned(after: snapshot as! [String: Any]) : generator.nextList(after: snapshot as! [Any])
                let text = jsonText(snapshot)
                let version = assertVersion(try client.put("/feeds/\(feed)", text))
                let latest = try collection(text)
                for (since, old) in [(0, nil)] + held.suffix(4).map({ ($0.version, Optional($0.collection)) }) {
                    let response = try client.get("/feeds/\(feed)/changes?since=\(since)")
                    XCTAssertEqual(response.status, 200)
                    let changes = try JSONDecoder().decode(FeedChanges<JSON, JSON>.self, from: Data(response.body))
                    XCTAssertEqual(changes.to, version)
                    XCTAssertEqual(try changes.applied(to: old) { $0.identity() }, latest, "\(feed) from \(since) to \(version)")
                }
                held.append((version, latest))
            }
        }
    }

    /// A transport that answers 503 (with `Retry-After`), then fails, then passes requests on.
    private final class FlakyTransport: HTTPTransport, @unchecked Sendable {
        private let lock = NSLock()
        private var failuresLeft = 4
        private var sent = 0

        var requests: Int { lock.withLock { sent } }

        func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
            let failure: Int = lock.withLock {
                sent += 1
                failuresLeft -= 1
                return failuresLeft
            }
            switch failure {
            case 3: return HTTPClientResponse(status: 503, headers: [("Retry-After", "0")], body: [])
            case 2: throw TransportError("connection refused")
            case 1: return HTTPClientResponse(status: 500, headers: [], body: [])
            default: return try await SocketTransport().send(request)
            }
        }
    }

    func testTheFollowerRetriesThrough503sAndNetworkErrors() async throws {
        let server = try startServer(["--read-token", "reader", "--write-token", "writer"])
        let client = server.client
        _ = assertVersion(try client.put("/feeds/f", "[1, 2]", headers: ["Authorization": "Bearer writer"]))
        let transport = FlakyTransport()
        let follower = FeedFollower<JSON, JSON, JSON>(
            FollowerConfiguration(serverURL: "http://127.0.0.1:\(server.port)", feed: "f", token: "reader", transport: transport, wait: 5)
        ) { $0.identity() }
        var updates = follower.makeAsyncIterator()
        let first = try await updates.next()
        XCTAssertEqual(first?.collection, .list([1, 2]))
        XCTAssertEqual(transport.requests, 4)
        _ = assertVersion(try client.put("/feeds/f", "[2, 3]", headers: ["Authorization": "Bearer writer"]))
        let second = try await updates.next()
        XCTAssertEqual(second?.collection, .list([2, 3]))
        XCTAssertEqual(second?.update.oldCounts, [2])
    }

    /// A follower waits before it tries again on the clock its configuration names: held by
    /// the test here, it asks again only when the test moves the clock on.
    func testTheFollowerWaitsOnItsClockBeforeItTriesAgain() async throws {
        let server = try startServer()
        let clock = ManualClock()
        let retries = Collector<String>()
        let follower = FeedFollower<JSON, JSON, JSON>(
            FollowerConfiguration(
                serverURL: "http://127.0.0.1:\(server.port)", feed: "later", transport: SocketTransport(), wait: 1,
                onRetry: { reason, _ in retries.append(reason) }, clock: clock
            )
        ) { $0.identity() }
        let first = Task {
            var updates = follower.makeAsyncIterator()
            return try await updates.next()
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while clock.sleeping == 0 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        XCTAssertEqual(clock.sleeping, 1, "the follower waits on the test's clock")
        XCTAssertEqual(retries.all.count, 1, "\(retries.all)")
        _ = assertVersion(try server.client.put("/feeds/later", "[1]"))
        clock.advance(by: .seconds(3600))
        let answered = try await first.value
        XCTAssertEqual(answered?.collection, .list([1]))
        XCTAssertEqual(retries.all.count, 1, "asked again once the clock moved, and found the feed")
        first.cancel()
    }

    /// A follower's long polls ask with a cursor: 0 first, then the one the last answer named
    /// (docs/feeds.md §5.4), so that followers of a quiet feed ask one URL a cache may answer.
    func testTheFollowersLongPollsAskWithTheLastAnswersCursor() async throws {
        let server = try startServer()
        let version = assertVersion(try server.client.put("/feeds/q", "[1]"))
        let transport = RecordingTransport()
        let follower = FeedFollower<JSON, JSON, JSON>(
            FollowerConfiguration(serverURL: "http://127.0.0.1:\(server.port)", feed: "q", transport: transport, wait: 1)
        ) { $0.identity() }
        var updates = follower.makeAsyncIterator()
        _ = try await updates.next()
        let port = server.port
        let writer = Task {
            try await Task.sleep(nanoseconds: 2_500_000_000)
            return try HTTPClient(port: port).put("/feeds/q", "[1, 2]")
        }
        let second = try await updates.next()
        assertVersion(try await writer.value, version + 1)
        XCTAssertEqual(second?.collection, try collection("[1, 2]"))
        let asked = transport.asked
        XCTAssertGreaterThanOrEqual(asked.count, 3, "\(asked)")
        XCTAssertTrue(asked[0].url.hasSuffix("since=0&wait=1&cursor=0&values=merge"), asked[0].url)
        for (request, answer) in zip(asked.dropFirst(), asked) {
            let named = try XCTUnwrap(answer.cursor, "every long poll's answer names a cursor")
            XCTAssertTrue(request.url.hasSuffix("&cursor=\(named)&values=merge"), "\(request.url) after \(named)")
        }
    }

    /// `maxChanges` and `changedMembers`: a reload with the whole collection past the limit,
    /// the changed members with a batch.
    func testTheFollowerHonoursMaxChangesAndChangedMembers() async throws {
        let server = try startServer()
        let client = server.client
        _ = assertVersion(try client.put("/feeds/m", #"[{"id": 1, "a": 1}, {"id": 2, "a": 1}]"#))
        let follower = FeedFollower<JSON, JSON, JSON>(
            FollowerConfiguration(
                serverURL: "http://127.0.0.1:\(server.port)", feed: "m", transport: SocketTransport(), wait: 5,
                maxChanges: 1, changedMembers: true
            )
        ) { $0.identity() }
        var updates = follower.makeAsyncIterator()
        let first = try await updates.next()
        XCTAssertEqual(first?.update, .reload(oldCounts: [0], newCounts: [2]), "two inserts are past maxChanges 1")
        XCTAssertEqual(first?.collection, try collection(#"[{"id": 1, "a": 1}, {"id": 2, "a": 1}]"#))
        _ = assertVersion(try client.put("/feeds/m", #"[{"id": 1, "a": 2, "b": 0}, {"id": 2, "a": 1}]"#))
        let second = try await updates.next()
        XCTAssertEqual(second?.update, .list(ListBatch(rows: RowChanges(reloaded: [0]), oldCount: 2, newCount: 2)))
        XCTAssertEqual(second?.changedMembers?.rows, [["a", "b"]])
        XCTAssertEqual(second?.collection, try collection(#"[{"id": 1, "a": 2, "b": 0}, {"id": 2, "a": 1}]"#))
        _ = assertVersion(try client.put("/feeds/m", #"[{"id": 3}, {"id": 4}]"#))
        let third = try await updates.next()
        XCTAssertEqual(third?.update, .reload(oldCounts: [2], newCounts: [2]))
        XCTAssertEqual(third?.collection, try collection(#"[{"id": 3}, {"id": 4}]"#))
    }

    /// A follower of a window holds only the window's rows: each update takes them to the
    /// window of the next version (a row pushed out deleted, one pushed in inserted), with
    /// the whole collection's row count; a changes outside the window brings no update.
    func testTheFollowerOfAWindowHoldsOnlyItsWindow() async throws {
        let server = try startServer()
        let client = server.client
        _ = assertVersion(try client.put("/feeds/w", jsonText(Array(0..<100))))
        let follower = FeedFollower<JSON, JSON, JSON>(
            FollowerConfiguration(
                serverURL: "http://127.0.0.1:\(server.port)", feed: "w", transport: SocketTransport(), wait: 5,
                window: FollowedWindow(RowWindow(offset: 10, limit: 3))
            )
        ) { $0.identity() }
        var updates = follower.makeAsyncIterator()
        let first = try await updates.next()
        XCTAssertEqual(first?.collection, .list([10, 11, 12]))
        XCTAssertEqual(first?.total, 100)
        _ = assertVersion(try client.put("/feeds/w", jsonText(Array(0..<100).map { $0 == 50 ? 500 : $0 })))
        _ = assertVersion(try client.put("/feeds/w", jsonText([-1] + Array(0..<100).map { $0 == 50 ? 500 : $0 })))
        let second = try await updates.next()
        XCTAssertEqual(second?.collection, .list([9, 10, 11]), "the change at row 50 brought no update of its own")
        XCTAssertEqual(second?.update, .list(ListBatch(rows: RowChanges(deleted: [2], inserted: [0]), oldCount: 3, newCount: 3)))
        XCTAssertEqual(second?.total, 101)
    }

    /// A window moved (grown as a user scrolls, then moved away) while the follower's long
    /// poll is parked: the poll is cut short, the rows the new window lacks are paged, and
    /// the update inserts them (and deletes those that left); changes then follow the new
    /// window. Sectioned windows move by whole sections.
    func testAMovedWindowIsPagedAndFollowed() async throws {
        let server = try startServer()
        let client = server.client
        _ = assertVersion(try client.put("/feeds/m", jsonText(Array(0..<20))))
        let window = FollowedWindow(RowWindow(offset: 0, limit: 3))
        let follower = FeedFollower<JSON, JSON, JSON>(
            FollowerConfiguration(serverURL: "http://127.0.0.1:\(server.port)", feed: "m", transport: SocketTransport(), wait: 30, window: window)
        ) { $0.identity() }
        var updates = follower.makeAsyncIterator()
        let first = try await updates.next()
        XCTAssertEqual(first?.collection, .list([0, 1, 2]))
        let moved = Task {
            try await Task.sleep(nanoseconds: 300_000_000)
            window.move(to: RowWindow(offset: 0, limit: 6))
        }
        let started = Date()
        let grown = try await updates.next()
        _ = try await moved.value
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "the parked long poll was cut short")
        XCTAssertEqual(grown?.collection, .list([0, 1, 2, 3, 4, 5]))
        XCTAssertEqual(grown?.update, .list(ListBatch(rows: RowChanges(inserted: [3, 4, 5]), oldCount: 3, newCount: 6)))
        XCTAssertEqual(grown?.total, 20)
        // A write in the new window reaches the follower.
        _ = assertVersion(try client.put("/feeds/m", jsonText([-1] + Array(0..<20))))
        let pushed = try await updates.next()
        XCTAssertEqual(pushed?.collection, .list([-1, 0, 1, 2, 3, 4]))
        // Moved away, over the write's rows: the window at its new place.
        window.move(to: RowWindow(offset: 10, limit: 3))
        let away = try await updates.next()
        XCTAssertEqual(away?.collection, .list([9, 10, 11]))
        XCTAssertEqual(away?.update, .list(ListBatch(rows: RowChanges(deleted: Array(0..<6), inserted: [0, 1, 2]), oldCount: 6, newCount: 3)))
        // Moved up by one: one row paged above, the last one dropped.
        window.move(to: RowWindow(offset: 9, limit: 3))
        let up = try await updates.next()
        XCTAssertEqual(up?.collection, .list([8, 9, 10]))
        XCTAssertEqual(up?.update, .list(ListBatch(rows: RowChanges(deleted: [2], inserted: [0]), oldCount: 3, newCount: 3)))

        // Sections move whole.
        _ = assertVersion(try client.put("/feeds/s", jsonText(["sections": (0..<5).map { ["id": "s\($0)", "items": [$0]] }])))
        let sections = FollowedWindow(RowWindow(offset: 1, limit: 2))
        let sectioned = FeedFollower<JSON, JSON, JSON>(
            FollowerConfiguration(serverURL: "http://127.0.0.1:\(server.port)", feed: "s", transport: SocketTransport(), wait: 30, window: sections)
        ) { $0.identity() }
        var sectionUpdates = sectioned.makeAsyncIterator()
        let firstSections = try await sectionUpdates.next()
        XCTAssertEqual(firstSections?.collection.counts, [1, 1])
        sections.move(to: RowWindow(offset: 2, limit: 3))
        let shifted = try await sectionUpdates.next()
        XCTAssertEqual(shifted?.update, .sectioned(SectionedBatch(
            sections: SectionChanges(deleted: [0], inserted: [1, 2]), rows: RowChanges(), oldCounts: [1, 1], newCounts: [1, 1, 1]
        )))
        XCTAssertEqual(shifted?.total, 5)
    }

    /// A window anchored on a row (``RowWindow/init(after:limit:)``) does not slide when rows
    /// arrive above it (they bring no update), follows a change inside it, moves to another
    /// anchor by one page (the rows both windows hold kept), and when its row is removed,
    /// stays where it stood, by offset, saying so through `onRetry`.
    func testAnAnchoredWindowDoesNotSlideAndStaysWhenItsRowGoes() async throws {
        let server = try startServer()
        let client = server.client
        let rows = (0..<20).map { ["id": "p\($0)", "t": 1000 - $0] as [String: Any] }
        _ = assertVersion(try client.put("/feeds/t?orderBy=-t", jsonText(Array(rows.reversed()))))
        let patch = { (ops: [[String: Any]]) in _ = assertVersion(try client.request("PATCH", "/feeds/t", body: Array(jsonText(["ops": ops]).utf8))) }
        let window = FollowedWindow(RowWindow(after: "p4", limit: 3))
        let retries = Collector<String>()
        let follower = FeedFollower<JSON, JSON, JSON>(
            FollowerConfiguration(
                serverURL: "http://127.0.0.1:\(server.port)", feed: "t", transport: SocketTransport(), wait: 30, window: window,
                onRetry: { reason, _ in retries.append(reason) }
            )
        ) { $0.identity() }
        let ids = { (update: FeedUpdate<JSON, JSON>?) -> [JSON?] in
            guard case .list(let items)? = update?.collection else { return [] }
            return items.map { $0["id"] }
        }
        var updates = follower.makeAsyncIterator()
        let first = try await updates.next()
        XCTAssertEqual(ids(first), ["p5", "p6", "p7"])
        // New rows above the window, then a change inside it: one update, the reload.
        try patch([["op": "upsert", "item": ["id": "n0", "t": 2000]]])
        try patch([["op": "upsert", "item": ["id": "n1", "t": 2001]]])
        try patch([["op": "upsert", "item": ["id": "p6", "t": 994, "seen": true]]])
        let changed = try await updates.next()
        XCTAssertEqual(ids(changed), ["p5", "p6", "p7"])
        XCTAssertEqual(changed?.update, .list(ListBatch(rows: RowChanges(reloaded: [1]), oldCount: 3, newCount: 3)))
        XCTAssertEqual(changed?.total, 22)
        // Moved to another anchor: the row both hold kept, the rest paged.
        window.move(to: RowWindow(after: "p6", limit: 3))
        let moved = try await updates.next()
        XCTAssertEqual(ids(moved), ["p7", "p8", "p9"])
        XCTAssertEqual(moved?.update, .list(ListBatch(rows: RowChanges(deleted: [0, 1], inserted: [1, 2]), oldCount: 3, newCount: 3)))
        // Its row removed: the window stays at its offset (9), read again.
        try patch([["op": "remove", "id": "p6"]])
        let stayed = try await updates.next()
        XCTAssertEqual(ids(stayed), ["p8", "p9", "p10"])
        XCTAssertEqual(window.window, RowWindow(offset: 9, limit: 3))
        XCTAssertTrue(retries.all.contains { $0.contains("p6") && $0.contains("offset 9") }, "\(retries.all)")
    }

    /// A client whose collection does not fit the answer (counts that differ) fetches the
    /// whole collection again, and shows it with the batch from what it showed, diffed on
    /// the device; a URL no retry can mend ends the follower at once.
    func testAMismatchRefetchesAndABadURLEnds() async throws {
        let server = try startServer()
        let version = assertVersion(try server.client.put("/feeds/d", "[1, 2, 3]"))
        _ = assertVersion(try server.client.put("/feeds/d", "[1, 2, 3, 4]"))
        let drifted = FeedFollower<JSON, JSON, JSON>(
            FollowerConfiguration(serverURL: "http://127.0.0.1:\(server.port)", feed: "d", transport: SocketTransport(), wait: 5),
            from: (version, .list([1, 2]))
        ) { $0.identity() }
        var updates = drifted.makeAsyncIterator()
        let update = try await updates.next()
        XCTAssertEqual(update?.collection, .list([1, 2, 3, 4]))
        XCTAssertEqual(update?.update, .list(ListBatch(rows: RowChanges(inserted: [2, 3]), oldCount: 2, newCount: 4)), "diffed on the device, no reload")
        let wrongURL = FeedFollower<JSON, JSON, JSON>(
            FollowerConfiguration(serverURL: "https://127.0.0.1:\(server.port)", feed: "d", transport: SocketTransport())
        ) { $0.identity() }
        do {
            for try await _ in wrongURL { XCTFail("no update over https with the socket transport") }
            XCTFail("the follower ended without an error")
        } catch let error as TransportError {
            XCTAssertFalse(error.isRetryable)
        }
    }

    /// A follower that fell behind retention (410) fetches the latest whole and animates the
    /// batch from what it shows, diffed on the device as the server would: rows gone deleted,
    /// new ones inserted, moved ones moved, changed ones reloaded (reconfigured), never
    /// `reloadData()`; sections likewise, paired by their headers' identities.
    func testAFollowerBehindRetentionAnimatesABatchNotAReload() async throws {
        let server = try startServer(["--max-versions", "2"])
        let client = server.client
        let histories = [
            ("r", [#"[{"id": 1}, {"id": 2, "v": 0}, {"id": 3}, {"id": 4}]"#, #"[{"id": 1}]"#, "[]", #"[{"id": 4}, {"id": 2, "v": 1}, {"id": 5}, {"id": 3}]"#]),
            ("s", [
                #"{"sections": [{"id": "a", "items": [{"id": 1}, {"id": 2}]}, {"id": "b", "items": [{"id": 3}]}]}"#,
                #"{"sections": []}"#, #"{"sections": [{"id": "z", "items": []}]}"#,
                #"{"sections": [{"id": "c", "items": []}, {"id": "a", "items": [{"id": 2}, {"id": 1}]}, {"id": "b", "items": [{"id": 3, "v": 1}]}]}"#,
            ]),
        ]
        for (feed, versions) in histories {
            _ = assertVersion(try client.put("/feeds/\(feed)", versions[0]))
            let follower = FeedFollower<JSON, JSON, JSON>(
                FollowerConfiguration(serverURL: "http://127.0.0.1:\(server.port)", feed: feed, transport: SocketTransport(), wait: 0)
            ) { $0.identity() }
            var updates = follower.makeAsyncIterator()
            let first = try await updates.next()
            let shown = try XCTUnwrap(first).collection
            // Three versions while the follower waits: its version is no longer retained.
            for text in versions.dropFirst() { _ = assertVersion(try client.put("/feeds/\(feed)", text)) }
            let latest = versions.last!
            let next = try await updates.next()
            let update = try XCTUnwrap(next)
            XCTAssertEqual(update.collection, try collection(latest), feed)
            let batch = try XCTUnwrap(update.update.sectionedBatch, "\(feed): a batch, not \(update.update)")
            let sections = { (collection: Collection) -> [Section<JSON, JSON>] in
                switch collection {
                case .list(let items): [Section(header: JSON.null, items: items)]
                case .sectioned(let sections): sections
                }
            }
            let applied = try batch.apply(to: sections(shown), values: batch.values(from: sections(update.collection)), identity: { $0.identity() })
            XCTAssertEqual(applied.map(\.items), sections(update.collection).map(\.items), "\(feed): \(batch)")
            if feed == "r" {
                XCTAssertEqual(batch.rows.reloaded, [RowPath(section: 0, row: 1)], "the changed row is reloaded: \(batch)")
                XCTAssertEqual(batch.rows.deleted, [RowPath(section: 0, row: 0)])
            } else {
                XCTAssertEqual(batch.sections.inserted, [0], "section c is new, a and b are kept: \(batch)")
                XCTAssertTrue(batch.sections.deleted.isEmpty, "\(batch)")
                XCTAssertEqual(batch.rows.reloaded, [RowPath(section: 1, row: 0)], "row 3 changed: \(batch)")
            }
        }
    }

    /// Cancelling a follower parked in a long poll over the socket transport ends it at once.
    func testCancellingASocketFollowerEndsIt() async throws {
        let server = try startServer()
        _ = assertVersion(try server.client.put("/feeds/c", "[1]"))
        let follower = FeedFollower<JSON, JSON, JSON>(
            FollowerConfiguration(serverURL: "http://127.0.0.1:\(server.port)", feed: "c", transport: SocketTransport(), wait: 30)
        ) { $0.identity() }
        let parked = Task {
            var updates = 0
            for try await _ in follower { updates += 1 }
            return updates
        }
        try await Task.sleep(for: .milliseconds(500))
        let started = Date()
        parked.cancel()
        let updates = try await parked.value
        XCTAssertEqual(updates, 1, "the first version, then parked")
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
    }

    /// A token the server refuses ends the sequence with the problem.
    func testARefusedTokenEndsTheFollower() async throws {
        let server = try startServer(["--read-token", "reader"])
        let follower = FeedFollower<JSON, JSON, JSON>(
            FollowerConfiguration(serverURL: "http://127.0.0.1:\(server.port)", feed: "f", token: "wrong", transport: SocketTransport())
        ) { $0.identity() }
        do {
            for try await _ in follower { XCTFail("no update with a refused token") }
            XCTFail("the follower ended without an error")
        } catch let problem as ProblemDocument {
            XCTAssertEqual(problem.status, 403)
        }
    }

    /// Apps use URLSession: the same follower over it, cancelled by its task.
    func testTheFollowerOverURLSession() async throws {
        let server = try startServer()
        let client = server.client
        _ = assertVersion(try client.put("/feeds/u", #"{"sections": [{"id": "a", "items": [{"id": 1}]}]}"#))
        let follower = FeedFollower<JSON, JSON, JSON>(
            FollowerConfiguration(serverURL: "http://127.0.0.1:\(server.port)", feed: "u", transport: URLSessionTransport(), wait: 5)
        ) { $0.identity() }
        let task = Task {
            var seen: [Collection] = []
            for try await update in follower {
                seen.append(update.collection)
                if seen.count == 2 { break }
            }
            return seen
        }
        try await Task.sleep(for: .milliseconds(300))
        _ = assertVersion(try client.put("/feeds/u", #"{"sections": [{"id": "a", "items": [{"id": 1}, {"id": 2}]}]}"#))
        let seen = try await task.value
        XCTAssertEqual(seen.last, try collection(#"{"sections": [{"id": "a", "items": [{"id": 1}, {"id": 2}]}]}"#))
        // Cancelling a follower parked in a long poll ends it promptly.
        let parked = Task { for try await _ in follower {} }
        try await Task.sleep(for: .milliseconds(300))
        let started = Date()
        parked.cancel()
        _ = try? await parked.value
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
    }

    /// The `batchdiff` binary follows feeds with its own socket client: it never loads
    /// Foundation's networking, nor libcurl behind it.
    func testTheBinaryDoesNotLoadLibcurl() throws {
        let server = try startServer()
        // /proc files report no size: read them to their end.
        let file = try XCTUnwrap(FileHandle(forReadingAtPath: "/proc/\(server.pid)/maps"))
        let maps = String(decoding: file.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertTrue(maps.contains("libFoundation"), "the maps name the libraries loaded")
        XCTAssertFalse(maps.contains("libcurl"))
        XCTAssertFalse(maps.contains("FoundationNetworking"))
    }
}

/// A transport that records each request's URL and the cursor its answer named.
final class RecordingTransport: HTTPTransport {
    private let recorded = Mutex<[(url: String, cursor: String?)]>([])
    private let socket = SocketTransport()

    var asked: [(url: String, cursor: String?)] { recorded.withLock { $0 } }

    func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        let response = try await socket.send(request)
        recorded.withLock { $0.append((request.url, response.header("BatchDiff-Cursor"))) }
        return response
    }
}
