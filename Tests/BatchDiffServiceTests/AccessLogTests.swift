import Foundation
import XCTest

/// The access log: a line per finished request at `info`, buffered as its fields and made
/// text by the log writer's thread (lines of requests served on different threads may come
/// out of order within the writer's 20 ms), all out by the time the server exits.
final class AccessLogTests: ServerTestCase {
    /// The lines of the server's log once it stopped (the writer flushes at exit).
    private func loggedLines(of server: ServerProcess) -> [Substring] {
        _ = server.terminate()
        return server.log.split(separator: "\n")
    }

    func testEachRequestLogsOneLineWithItsFields() throws {
        let server = try startServer(["--log-level", "info"])
        let client = server.client
        XCTAssertEqual(try client.get("/healthz").status, 200)
        XCTAssertEqual(try client.post("/diff", #"{"old": ["a"], "new": ["b", "a"]}"#, headers: ["Content-Type": "application/json"]).status, 200)
        XCTAssertEqual(try client.get("/nowhere").status, 404)
        let lines = loggedLines(of: server)
        let access = lines.filter { $0.contains(" info batchdiff: ") }
        XCTAssertEqual(access.count, 3, "\(lines)")
        let shape = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ info batchdiff: (GET|POST) (\/\S*) (\d{3}) \d+us in=(\d+) out=(\d+)$/
        let fields = access.compactMap { line in line.wholeMatch(of: shape).map { "\($0.1) \($0.2) \($0.3) in=\($0.4)" } }
        XCTAssertEqual(fields.count, 3, "every access line has its time, level, label and fields: \(access)")
        XCTAssertEqual(fields.sorted(), ["GET /healthz 200 in=0", "GET /nowhere 404 in=0", "POST /diff 200 in=33"])
        XCTAssertTrue(lines.contains { $0.contains("notice batchdiff: stopped") }, "the lines logged at exit are out too: \(lines)")
    }

    /// A path is logged with every byte that is not printable ASCII, every space and `%`
    /// escaped: a client cannot forge a line, nor fields within one (a decoded `%20` made
    /// `/x 200 1us in=0 out=0` read as another request), nor break it with U+0085 or U+2028.
    func testAPathCannotForgeALine() throws {
        let server = try startServer(["--log-level", "info"])
        for path in ["/x%0A2026-01-01T00:00:00Z%20info%20batchdiff:%20GET%20/forged", "/x%20200%201us%20in=0%20out=0", "/n%C2%85l%E2%80%A8s%25"] {
            XCTAssertEqual(try server.client.get(path).status, 404)
        }
        let lines = loggedLines(of: server)
        XCTAssertFalse(lines.contains { $0.hasPrefix("2026-01-01") }, "\(lines)")
        XCTAssertTrue(lines.contains { $0.contains(" GET /x%0A2026-01-01T00:00:00Z%20info%20batchdiff:%20GET%20/forged 404 ") }, "\(lines)")
        XCTAssertTrue(lines.contains { $0.contains(" GET /x%20200%201us%20in=0%20out=0 404 ") }, "\(lines)")
        XCTAssertTrue(lines.contains { $0.contains(" GET /n%C2%85l%E2%80%A8s%25 404 ") }, "\(lines)")
        XCTAssertFalse(server.log.unicodeScalars.contains { $0 == "\u{85}" || $0 == "\u{2028}" })
    }

    func testNoAccessLinesAboveInfo() throws {
        let server = try startServer(["--log-level", "notice"])
        XCTAssertEqual(try server.client.get("/healthz").status, 200)
        let lines = loggedLines(of: server)
        XCTAssertTrue(lines.contains { $0.contains("notice batchdiff: listening") }, "\(lines)")
        XCTAssertFalse(lines.contains { $0.contains("/healthz") }, "\(lines)")
    }
}
