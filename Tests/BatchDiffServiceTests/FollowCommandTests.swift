import Foundation
import Glibc
import XCTest

/// `batchdiff follow` against real servers: one line per version, through tokens, a feed
/// deleted and created again, and a server restarted on the same port.
final class FollowCommandTests: ServerTestCase {
    /// A running `batchdiff follow`, its output lines collected as they come.
    private final class FollowProcess: @unchecked Sendable {  // `lines` is read and written under `lock`
        let process = Process()
        private let output = Pipe()
        private let errorOutput = Pipe()
        private let lock = NSLock()
        private var lines: [String] = []
        private var partial = ""
        private var errorText = ""

        init(_ arguments: [String], environment: [String: String] = [:]) throws {
            ServerProcess.endingWithThisProcess(process, try ServerProcess.binaryURL(), ["follow"] + arguments)
            process.environment = ServerProcess.environment(environment)
            process.standardOutput = output
            process.standardError = errorOutput
            errorOutput.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                guard let self, !data.isEmpty else { return }
                self.lock.withLock { self.errorText += String(decoding: data, as: UTF8.self) }
            }
            output.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                guard let self, !data.isEmpty else { return }
                self.lock.withLock {
                    self.partial += String(decoding: data, as: UTF8.self)
                    while let newline = self.partial.firstIndex(of: "\n") {
                        self.lines.append(String(self.partial[..<newline]))
                        self.partial = String(self.partial[self.partial.index(after: newline)...])
                    }
                }
            }
            try process.run()
        }

        deinit {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            output.fileHandleForReading.readabilityHandler = nil
            errorOutput.fileHandleForReading.readabilityHandler = nil
        }

        /// What it wrote on standard error so far.
        var errors: String { lock.withLock { errorText } }

        /// Waits up to `timeout` seconds for line `index` (from 0), parsed.
        func line(_ index: Int, timeout: Double = 15) -> [String: Any]? {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if let line = lock.withLock({ lines.count > index ? lines[index] : nil }) {
                    return try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                }
                usleep(20_000)
            }
            return nil
        }

        var lineCount: Int { lock.withLock { lines.count } }
    }

    private func data(_ line: [String: Any]?) -> String? {
        line.flatMap { $0["data"] }.map(jsonText)
    }

    func testFollowPrintsEachVersionThroughDeleteAndRestart() throws {
        let port = try freeLoopbackPort()
        let tokens = ["--read-token", "reader", "--write-token", "writer", "--port", "\(port)"]
        var server = try startServer(tokens)
        let write = ["Authorization": "Bearer writer"]
        let first = assertVersion(try server.client.put("/feeds/f", #"[{"id": 1, "v": 1}]"#, headers: write))
        let follow = try FollowProcess(["f", "--url", "http://127.0.0.1:\(port)", "--wait", "2"], environment: ["BATCHDIFF_TOKEN": "reader"])
        XCTAssertEqual(data(follow.line(0)), jsonText([["id": 1, "v": 1]]))
        XCTAssertEqual(follow.line(0)?["version"] as? Int, first)
        _ = assertVersion(try server.client.put("/feeds/f", #"[{"id": 2}, {"id": 1, "v": 2}]"#, headers: write))
        XCTAssertEqual(data(follow.line(1)), jsonText([["id": 2], ["id": 1, "v": 2]]))
        // Deleted and created again, of another shape: a new series, fetched whole.
        XCTAssertEqual(try server.client.delete("/feeds/f", headers: write).status, 204)
        let recreated = assertVersion(try server.client.put("/feeds/f", #"{"sections": [{"id": "s", "items": [3]}]}"#, headers: write))
        XCTAssertEqual(data(follow.line(2)), jsonText(["sections": [["id": "s", "items": [3]]]]))
        XCTAssertEqual(follow.line(2)?["version"] as? Int, recreated)
        // The server restarts (memory: the feed is gone until written again).
        XCTAssertEqual(server.terminate(), 0)
        usleep(500_000)
        server = try startServer(tokens)
        _ = assertVersion(try server.client.put("/feeds/f", "[4, 5]", headers: write))
        XCTAssertEqual(data(follow.line(3, timeout: 20)), jsonText([4, 5]))
        XCTAssertEqual(follow.lineCount, 4, "one line per version, no repeats")
        XCTAssertTrue(follow.process.isRunning)
    }

    /// `--offset` and `--limit`: each line holds the window's rows and the whole count.
    func testFollowAWindow() throws {
        let server = try startServer()
        _ = assertVersion(try server.client.put("/feeds/w", jsonText(Array(0..<20))))
        let follow = try FollowProcess(["w", "--url", "http://127.0.0.1:\(server.port)", "--wait", "2", "--offset", "5", "--limit", "2"])
        XCTAssertEqual(data(follow.line(0)), jsonText([5, 6]))
        XCTAssertEqual(follow.line(0)?["total"] as? Int, 20)
        _ = assertVersion(try server.client.put("/feeds/w", jsonText([100] + Array(0..<20))))
        XCTAssertEqual(data(follow.line(1)), jsonText([4, 5]))
        XCTAssertEqual(follow.line(1)?["total"] as? Int, 21)
    }

    /// A server not there, then a feed not there: `follow` says on standard error what it
    /// waits for and when it tries again, instead of waiting in silence, and follows the
    /// feed once it exists.
    func testFollowSaysWhatItWaitsFor() throws {
        let port = try freeLoopbackPort()
        let follow = try FollowProcess(["news", "--url", "http://127.0.0.1:\(port)", "--wait", "1"])
        XCTAssertTrue(eventually(timeout: 10) { follow.errors.contains("the server cannot be reached") }, follow.errors)
        XCTAssertTrue(follow.errors.contains("trying again in"), follow.errors)
        let server = try startServer(["--port", "\(port)"])
        XCTAssertTrue(eventually(timeout: 15) { follow.errors.contains("feed news does not exist (yet)") }, follow.errors)
        let version = assertVersion(try server.client.put("/feeds/news", "[1]"))
        XCTAssertEqual(follow.line(0, timeout: 20)?["version"] as? Int, version)
    }

    func testFollowWithARefusedTokenFails() throws {
        let server = try startServer(["--read-token", "reader"])
        let run = try CommandRun(["follow", "f", "--url", "http://127.0.0.1:\(server.port)", "--token", "wrong"])
        XCTAssertNotEqual(run.status, 0)
        XCTAssertTrue(run.error.contains("403"), run.error)
        let bad = try CommandRun(["follow", "f", "--url", "https://example.com"])
        XCTAssertNotEqual(bad.status, 0)
    }
}
