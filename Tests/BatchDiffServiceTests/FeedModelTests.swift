import BatchDiffClient
import Foundation
import Observation
import Synchronization
import XCTest

/// ``FeedModel``, the SwiftUI model, against a real server: it follows a feed, shows each
/// version's rows (and sections) with their identities, and tells its observers (SwiftUI's
/// views) when a version changes them.
final class FeedModelTests: ServerTestCase {
    /// Whether an observation saw a change.
    private final class Changed: Sendable {
        private let flag = Atomic<Bool>(false)
        func set() { flag.store(true, ordering: .relaxed) }
        var isSet: Bool { flag.load(ordering: .relaxed) }
    }

    /// Waits, without holding the main actor, until `condition` (read on it) holds.
    private func waitUntil(_ what: String, _ condition: @escaping @MainActor () -> Bool) async throws {
        for _ in 0..<400 {
            if await condition() { return }
            try await Task.sleep(for: .milliseconds(25))
        }
        XCTFail("timed out waiting until \(what)")
    }

    func testTheModelFollowsAFeedAndTellsItsObservers() async throws {
        let server = try startServer()
        _ = assertVersion(try server.client.put("/feeds/m", #"[{"id": 1, "t": "a"}, {"id": 2, "t": "b"}]"#))
        let configuration = FollowerConfiguration(serverURL: "http://127.0.0.1:\(server.port)", feed: "m", transport: SocketTransport(), wait: 5)
        let model = await FeedModel<JSON, JSON, JSON>(configuration) { $0.identity() }
        let following = Task { await model.follow() }
        defer { following.cancel() }
        try await waitUntil("the first version is shown") { model.rows.count == 2 }
        let firstVersion = await model.version
        let ids = await model.rows.map(\.id)
        XCTAssertEqual(ids, [1, 2])
        let changed = Changed()
        await MainActor.run {
            withObservationTracking { _ = model.rows } onChange: { changed.set() }
        }
        _ = assertVersion(try server.client.put("/feeds/m", #"[{"id": 2, "t": "b"}, {"id": 3, "t": "c"}]"#), firstVersion + 1)
        try await waitUntil("the next version is shown") { model.rows.map(\.id) == [2, 3] }
        XCTAssertTrue(changed.isSet, "observers of the rows were told")
        let version = await model.version
        XCTAssertEqual(version, firstVersion + 1)
    }

    func testSectionsKeepTheirHeadersIdentities() async throws {
        let server = try startServer()
        _ = assertVersion(try server.client.put("/feeds/s", #"{"sections": [{"id": "a", "items": [{"id": 1}]}, {"id": "b", "items": [{"id": 2}]}]}"#))
        let configuration = FollowerConfiguration(serverURL: "http://127.0.0.1:\(server.port)", feed: "s", transport: SocketTransport(), wait: 5)
        let model = await FeedModel<JSON, JSON, JSON>(configuration) { $0.identity() }
        let following = Task { await model.follow() }
        defer { following.cancel() }
        try await waitUntil("the sections are shown") { model.sections.count == 2 }
        let sectionsNamed = await MainActor.run { model.sections.map(\.id) == [AnyHashable(JSON.string("a")), AnyHashable(JSON.string("b"))] }
        XCTAssertTrue(sectionsNamed, "sections named by their headers' ids")
        let rows = await model.rows.map(\.id)
        XCTAssertEqual(rows, [1, 2], "a sectioned feed's rows, one section after the other")
    }

    /// A follower that ends with an error leaves it in `failure`.
    func testARefusedTokenIsTheFailure() async throws {
        let server = try startServer(["--read-token", "reader"])
        let configuration = FollowerConfiguration(serverURL: "http://127.0.0.1:\(server.port)", feed: "t", token: "wrong", transport: SocketTransport())
        let model = await FeedModel<JSON, JSON, JSON>(configuration) { $0.identity() }
        await model.follow()
        let status = await MainActor.run { (model.failure as? ProblemDocument)?.status }
        XCTAssertEqual(status, 403, "a token the server does not know")
    }
}
