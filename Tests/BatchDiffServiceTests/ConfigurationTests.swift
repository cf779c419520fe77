import Foundation
import XCTest

/// Settings from `BATCHDIFF_*` environment variables, as a container sets them: they take
/// effect, flags win over them, and a bad value stops `serve` with a clear error without
/// breaking `--help`.
final class ConfigurationTests: ServerTestCase {
    private let smallDiff = #"{"old": ["a", "b", "c"], "new": ["c", "b", "a", "d", "e", "f", "g", "h"]}"#

    func testEnvironmentVariablesTakeEffect() throws {
        let server = try startServer(environment: [
            "BATCHDIFF_BODY_LIMIT": "32",
            "BATCHDIFF_WRITE_TOKEN": "from-env",
            "BATCHDIFF_MAX_VERSIONS": "2",
        ])
        let client = server.client
        assertProblem(try client.post("/diff", smallDiff), 413, "body_too_large")
        assertProblem(try client.put("/feeds/env", "[1]"), 401, "unauthorized")
        let token = ["Authorization": "Bearer from-env"]
        let first = assertVersion(try client.put("/feeds/env", "[1]", headers: token))
        assertVersion(try client.put("/feeds/env", "[1, 2]", headers: token), first + 1)
        assertVersion(try client.put("/feeds/env", "[1, 2, 3]", headers: token), first + 2)
        assertVersionGone(try client.get("/feeds/env/changes?since=\(first)"), latest: first + 2)
        XCTAssertEqual(try client.get("/feeds/env/changes?since=\(first + 1)").status, 200)
    }

    func testFlagsWinOverTheEnvironment() throws {
        let server = try startServer(["--body-limit", "4096"], environment: ["BATCHDIFF_BODY_LIMIT": "32"])
        XCTAssertEqual(try server.client.post("/diff", smallDiff).status, 200)
    }

    func testHealthcheckFindsTheServerThroughTheEnvironment() throws {
        let server = try startServer()
        let healthy = try CommandRun(["healthcheck"], environment: ["BATCHDIFF_HOST": "127.0.0.1", "BATCHDIFF_PORT": "\(server.port)"])
        XCTAssertEqual(healthy.status, 0, healthy.error)
        XCTAssertEqual(server.terminate(), 0)
        let gone = try CommandRun(["healthcheck", "--port", "\(server.port)"])
        XCTAssertNotEqual(gone.status, 0)
        XCTAssertTrue(gone.error.contains("GET /healthz on 127.0.0.1:\(server.port): no answer"), gone.error)
    }

    func testASecondServerOnATakenPortFailsToStart() throws {
        let first = try startServer()
        XCTAssertThrowsError(try ServerProcess(["--port", "\(first.port)"]), "two servers shared port \(first.port)") { error in
            XCTAssertTrue("\(error)".contains("address in use"), "\(error)")
        }
        XCTAssertEqual(try first.client.get("/healthz").status, 200)
    }

    /// Under an open-files limit too low for `--max-connections`, the server says so at
    /// start (both numbers, and the connections it keeps) and `/metrics` shows the limit in
    /// force. Under 20,000 open files, `--max-connections 200000` silently stayed at 20,000.
    func testAConnectionLimitTheOpenFilesCannotHoldIsSaid() throws {
        let limited = try startServer(["--max-connections", "5000", "--threads", "2"], openFiles: 1024)
        // 1,024 files, less 3 probe connections, 2 per thread and 64 for the rest.
        XCTAssertEqual(try limited.client.metric("batchdiff_connection_limit"), 953)
        let said = "the open-files limit is 1024 (its hard limit); --max-connections 5000 needs 5071: keeping 953 connections"
        XCTAssertTrue(eventually(timeout: 5) { ((try? String(contentsOf: limited.logURL, encoding: .utf8)) ?? "").contains(said) },
                      (try? String(contentsOf: limited.logURL, encoding: .utf8)) ?? "")
        let roomy = try startServer(["--max-connections", "500", "--threads", "2"], openFiles: 1024)
        XCTAssertEqual(try roomy.client.metric("batchdiff_connection_limit"), 500)
        XCTAssertFalse(((try? String(contentsOf: roomy.logURL, encoding: .utf8)) ?? "").contains("open-files limit"))
    }

    func testABadIntegerStopsServeButNotHelp() throws {
        let refused = try CommandRun(["serve", "--port", "0"], environment: ["BATCHDIFF_MAX_WAIT": "soon"])
        XCTAssertEqual(refused.status, 64, "a usage error")
        XCTAssertTrue(refused.error.contains("BATCHDIFF_MAX_WAIT=soon is not an integer"), refused.error)
        XCTAssertFalse(refused.output.contains("listening"))
        let badPort = try CommandRun(["healthcheck"], environment: ["BATCHDIFF_PORT": "80a"])
        XCTAssertEqual(badPort.status, 64)
        XCTAssertTrue(badPort.error.contains("BATCHDIFF_PORT=80a is not an integer"), badPort.error)
        let help = try CommandRun(["serve", "--help"], environment: ["BATCHDIFF_MAX_WAIT": "soon", "BATCHDIFF_PORT": "80a"])
        XCTAssertEqual(help.status, 0, help.error)
        XCTAssertTrue(help.output.contains("BATCHDIFF_MAX_WAIT"), help.output)
    }
}
