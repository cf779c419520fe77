import Foundation
import XCTest

/// `batchdiff diff OLD NEW`: the batch on standard output and exit 0, or a clear error on
/// standard error and a non-zero exit.
final class DiffCommandTests: XCTestCase {
    private func run(_ arguments: [String], input: String? = nil) throws -> CommandRun {
        try CommandRun(["diff"] + arguments, input: input)
    }

    private func file(_ text: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("batchdiff-\(UUID().uuidString).json")
        try Data(text.utf8).write(to: url)
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url.path
    }

    func testPrintsTheBatch() throws {
        let old = try file(#"[{"id": 1, "t": "a"}, {"id": 2}, {"id": 3}]"#)
        let new = try file(#"[{"id": 3}, {"id": 1, "t": "b"}, {"id": 4}]"#)
        let outcome = try run([old, new])
        XCTAssertEqual(outcome.status, 0, outcome.error)
        XCTAssertEqual(outcome.output.trimmingCharacters(in: .whitespacesAndNewlines),
                       #"{"rows":{"deleted":[1],"inserted":[2],"reloaded":[0],"moved":[{"from":2,"to":0}]},"counts":{"old":3,"new":3}}"#)
    }

    func testReadsStandardInputAndTakesOptions() throws {
        let new = try file(#"[{"key": "b"}, {"key": "a"}]"#)
        let outcome = try run(["-", new, "--id-key", "key", "--no-moves"], input: #"[{"key": "a"}, {"key": "b"}]"#)
        XCTAssertEqual(outcome.status, 0, outcome.error)
        XCTAssertEqual(outcome.output.trimmingCharacters(in: .whitespacesAndNewlines),
                       #"{"rows":{"deleted":[1],"inserted":[0],"reloaded":[],"moved":[]},"counts":{"old":2,"new":2}}"#)
    }

    func testBadInputIsAClearErrorAndANonZeroExit() throws {
        let good = try file("[1, 2]")
        let malformed = try run([try file("[1, 2"), good])
        XCTAssertNotEqual(malformed.status, 0)
        XCTAssertTrue(malformed.error.contains("malformed JSON at byte 5"), malformed.error)
        XCTAssertTrue(malformed.output.isEmpty)
        let mismatched = try run([good, try file(#"{"sections": []}"#)])
        XCTAssertNotEqual(mismatched.status, 0)
        XCTAssertTrue(mismatched.error.contains("same shape"), mismatched.error)
        let missing = try run([good, "/nonexistent/new.json"])
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.error.contains("cannot read /nonexistent/new.json"), missing.error)
    }
}
