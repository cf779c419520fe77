import BatchDiffClient
import Foundation
import TestSupport
import XCTest

/// A feed created sorted (`?orderBy=-score`, docs/feeds.md §14) holds its rows in its order
/// through writes that list them in any order, checked the same way over every store: the
/// order stays with the feed across `reopened` (a restart, for a durable store), a write of
/// the same rows in another order makes no version, `PATCH` upserts (and merges) that take no
/// position go where their keys put them, every `changes` answer applied to the sorted rows
/// gives the sorted rows, and a write naming another order is refused.
func assertSortedFeedKeepsItsOrder(
    _ client: HTTPClient, reopened: () throws -> HTTPClient, feed: String, file: StaticString = #filePath, line: UInt = #line
) throws {
    var random = SplitMix64(state: 77)
    /// Rows `{"id", "score"}` by `-score`, then `id`: the model of the order.
    func sorted(_ rows: [(id: Int, score: Int)]) -> [(id: Int, score: Int)] {
        rows.sorted { $0.score != $1.score ? $0.score > $1.score : $0.id < $1.id }
    }
    func text(_ rows: [(id: Int, score: Int)]) -> String {
        "[" + rows.map { #"{"id":\#($0.id),"score":\#($0.score)}"# }.joined(separator: ",") + "]"
    }
    var rows = (0..<30).map { (id: $0, score: random.below(6)) }
    let first = assertVersion(try client.put("/feeds/\(feed)?orderBy=-score", text(rows.shuffled(using: &random))), file: file, line: line)
    let data = { (client: HTTPClient) in assertJSON(try client.get("/feeds/\(feed)"), file: file, line: line)["data"].map(canonicalJSON) }
    XCTAssertEqual(try data(client), canonicalJSON(parseJSON(text(sorted(rows)))), "the version holds the rows sorted", file: file, line: line)

    let client = try reopened()
    let unchanged = assertJSON(try client.put("/feeds/\(feed)", text(rows.shuffled(using: &random))), file: file, line: line)
    XCTAssertEqual(unchanged["changed"] as? Bool, false, "the same rows in another order are the same version", file: file, line: line)
    var held = try collection(text(sorted(rows)))
    var version = first
    for round in 0..<8 {
        let next: Int
        if round.isMultiple(of: 2) {
            for _ in 0..<4 { rows[random.below(rows.count)].score = random.below(6) }
            rows.append((id: rows.count + 100 * round, score: random.below(6)))
            next = assertVersion(try client.put("/feeds/\(feed)", text(rows.shuffled(using: &random))), file: file, line: line)
        } else {
            // Upserts that take no position: each row goes where its score puts it.
            var ops: [String] = []
            for _ in 0..<3 {
                let index = random.below(rows.count)
                rows[index].score = random.below(6)
                ops.append(#"{"op":"upsert","item":\#(text([rows[index]]).dropFirst().dropLast())}"#)
            }
            let removed = rows.remove(at: random.below(rows.count))
            ops.append(#"{"op":"remove","id":\#(removed.id)}"#)
            rows.append((id: rows.count + 100 * round, score: random.below(6)))
            ops.append(#"{"op":"merge","id":\#(rows[0].id),"patch":{"score":\#(rows[0].score + 7)}}"#)
            rows[0].score += 7
            ops.append(#"{"op":"upsert","item":\#(text([rows.last!]).dropFirst().dropLast())}"#)
            let body = Array(#"{"ops":[\#(ops.joined(separator: ","))]}"#.utf8)
            next = assertVersion(try client.request("PATCH", "/feeds/\(feed)", body: body), file: file, line: line)
        }
        let answer = try client.get("/feeds/\(feed)/changes?since=\(version)")
        let changes = try JSONDecoder().decode(FeedChanges<JSON, JSON>.self, from: Data(answer.body))
        held = try changes.applied(to: held) { $0.identity() }
        XCTAssertEqual(held, try collection(text(sorted(rows))), "the batch applied to the sorted rows", file: file, line: line)
        version = next
    }
    XCTAssertEqual(try data(client), canonicalJSON(parseJSON(text(sorted(rows)))), file: file, line: line)
    let refused = assertProblem(try client.put("/feeds/\(feed)?orderBy=score", text(rows)), 422, "invalid_shape", file: file, line: line)
    XCTAssertTrue((refused["detail"] as? String ?? "").contains(#""-score""#), "\(refused)", file: file, line: line)
    assertProblem(try client.put("/feeds/\(feed)?sectionOrderBy=rank", text(rows)), 422, "invalid_shape", file: file, line: line)
    assertVersion(try client.put("/feeds/\(feed)?orderBy=-score", text(rows.reversed())), version, file: file, line: line)
}
