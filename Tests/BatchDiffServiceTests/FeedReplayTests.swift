import BatchDiff
import Foundation
import XCTest

/// Feeds end to end (docs/feeds.md): 50 random snapshots are stored, and a client at
/// any retained version rebuilds the latest from `changes?since=k` alone.
final class FeedReplayTests: ServerTestCase {
    private static let versions = 50
    private static let retained = 20

    /// How one shape of collection is turned into elements and batches.
    private struct Shape<Batch, Collection: Equatable> {
        var elements: (Any) -> Collection
        var empty: Any
        var decode: ([String: Any]) throws -> Batch
        /// Applies a PUT answer's batch with values taken from the new collection.
        var applyWithLocalValues: (Batch, Collection, Collection) throws -> Collection
        /// Applies a changes answer's batch with the answer's own values.
        var applyWithAnswerValues: (Batch, Collection, [String: Any]) throws -> Collection
        var next: (inout SnapshotGenerator, Any) -> Any
    }

    func testListFeedReplaysFromEveryRetainedVersion() throws {
        try replay(feed: "list-feed", seed: 0x5EED_0001, shape: Shape<ListBatch, [JSONElement]>(
            elements: listElements,
            empty: [Any](),
            decode: decodeListBatch,
            applyWithLocalValues: { batch, old, new in try batch.apply(to: old, values: batch.values(from: new)) },
            applyWithAnswerValues: { batch, old, answer in try batch.apply(to: old, values: decodeListValues(answer)) },
            next: { generator, previous in generator.nextList(after: previous as! [Any]) }
        ))
    }

    func testSectionedFeedReplaysFromEveryRetainedVersion() throws {
        try replay(feed: "sectioned-feed", seed: 0x5EED_0002, shape: Shape<SectionedBatch, [JSONSection]>(
            elements: sectionElements,
            empty: ["sections": [Any]()],
            decode: decodeSectionedBatch,
            applyWithLocalValues: { batch, old, new in try batch.apply(to: old, values: batch.values(from: new)) },
            applyWithAnswerValues: { batch, old, answer in try batch.apply(to: old, values: decodeSectionedValues(answer)) },
            next: { generator, previous in generator.nextSectioned(after: previous as! [String: Any]) }
        ))
    }

    private func replay<Batch, Collection: Equatable>(feed: String, seed: UInt64, shape: Shape<Batch, Collection>) throws {
        let server = try startServer(["--max-versions", "\(Self.retained)"])
        let client = server.client
        var generator = SnapshotGenerator(seed: seed)
        // snapshots[k] is the k-th version, number version(k); snapshots[0] is the empty
        // collection, version 0. The first version is the server's (a new series).
        var snapshots: [Any] = [shape.empty]
        var first = 0
        func version(_ k: Int) -> Int { k == 0 ? 0 : first + k - 1 }
        for k in 1...Self.versions {
            let snapshot = shape.next(&generator, snapshots[k - 1])
            snapshots.append(snapshot)
            let response = try client.put("/feeds/\(feed)", jsonText(snapshot))
            let written = assertVersion(response, k == 1 ? nil : version(k))
            if k == 1 { first = written }
            let answer = assertJSON(response)
            XCTAssertEqual(answer["feed"] as? String, feed)
            XCTAssertEqual(answer["changed"] as? Bool, true, "PUT \(k)")
            // The PUT's batch takes the version before to this one.
            let old = shape.elements(snapshots[k - 1])
            let new = shape.elements(snapshot)
            do {
                let rebuilt = try shape.applyWithLocalValues(try shape.decode(answer), old, new)
                XCTAssertEqual(rebuilt, new, "PUT \(k): its batch does not lead from version \(version(k - 1)) to \(version(k))")
            } catch {
                XCTFail("PUT \(k): \(error); answer: \(response.text)")
            }
        }
        let latest = shape.elements(snapshots[Self.versions])
        let latestVersion = version(Self.versions)

        let whole = try client.get("/feeds/\(feed)")
        assertVersion(whole, latestVersion)
        let wholeAnswer = assertJSON(whole)
        XCTAssertEqual(wholeAnswer["data"].map(canonicalJSON), canonicalJSON(snapshots[Self.versions]))

        let oldestRetained = Self.versions - Self.retained + 1
        for k in 0...Self.versions {
            let since = version(k)
            let response = try client.get("/feeds/\(feed)/changes?since=\(since)")
            guard k == 0 || k >= oldestRetained else {
                assertVersionGone(response, latest: latestVersion)
                continue
            }
            let answer = assertJSON(response)
            XCTAssertEqual(answer["feed"] as? String, feed)
            XCTAssertEqual(int(answer["from"]), since)
            XCTAssertEqual(int(answer["to"]), latestVersion)
            do {
                let batch = try shape.decode(answer)
                let rebuilt = try shape.applyWithAnswerValues(batch, shape.elements(snapshots[k]), answer)
                XCTAssertEqual(rebuilt, latest, "since=\(since): rebuilding from the answer does not give the latest")
            } catch {
                XCTFail("since=\(since): \(error); answer: \(response.text)")
            }
        }
        // since=0 inserts everything.
        let everything = try client.get("/feeds/\(feed)/changes?since=0")
        let everythingAnswer = assertJSON(everything)
        let rows = everythingAnswer["rows"] as? [String: Any] ?? [:]
        XCTAssertTrue((rows["deleted"] as? [Any] ?? []).isEmpty && (rows["moved"] as? [Any] ?? []).isEmpty
            && (rows["reloaded"] as? [Any] ?? []).isEmpty, everything.text)
        if let sections = everythingAnswer["sections"] as? [String: Any] {
            let count = (snapshots[Self.versions] as? [String: Any])?["sections"] as? [Any] ?? []
            XCTAssertEqual((sections["inserted"] as? [Any] ?? []).count, count.count, "since=0 inserts every section")
        } else {
            XCTAssertEqual((rows["inserted"] as? [Any] ?? []).count, (snapshots[Self.versions] as? [Any] ?? []).count, "since=0 inserts every row")
        }
        // Bad since values.
        for bad in ["abc", "-1", "1.5", "", "%20"] {
            assertProblem(try client.get("/feeds/\(feed)/changes?since=\(bad)"), 400, "invalid_query")
        }
        assertProblem(try client.get("/feeds/\(feed)/changes"), 400, "invalid_query")
        // Versions this series never gave: newer than the latest, or below the first.
        for gone in [latestVersion + 1, first - 1, 1] {
            assertVersionGone(try client.get("/feeds/\(feed)/changes?since=\(gone)"), latest: latestVersion)
        }
        // The latest version, asked again, is an empty batch.
        let current = assertJSON(try client.get("/feeds/\(feed)/changes?since=\(latestVersion)"))
        XCTAssertEqual(int(current["from"]), latestVersion)
        XCTAssertEqual(int(current["to"]), latestVersion)
        XCTAssertEqual(try shape.applyWithAnswerValues(try shape.decode(current), latest, current), latest)
    }
}
