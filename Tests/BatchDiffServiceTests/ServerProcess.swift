import Foundation
import Glibc
import XCTest

/// A `batchdiff serve` process on a free port of 127.0.0.1, for one test.
///
/// Started from the build directory the test bundle lives in (`.build/<config>/`); killed
/// with SIGKILL when dropped while still running, so a failing test never leaks a server.
final class ServerProcess {
    let process = Process()
    /// The port the server announced on stdout.
    let port: UInt16
    /// Where the server's stderr (its log) goes, for failure messages.
    let logURL: URL
    private let stdout = Pipe()

    /// Starts the server with `arguments` after `serve --host 127.0.0.1 --port 0` and waits
    /// (up to `timeout` seconds) for its `listening on` line.
    init(_ arguments: [String] = [], environment: [String: String] = [:], openFiles: Int? = nil, timeout: Double = 20) throws {
        let binary = try Self.binaryURL()
        logURL = FileManager.default.temporaryDirectory
            .appendingPathComponent("batchdiff-test-\(getpid())-\(UUID().uuidString.prefix(8)).log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        Self.endingWithThisProcess(process, binary, ["serve", "--host", "127.0.0.1", "--port", "0", "--log-level", "warning"] + arguments, openFiles: openFiles)
        process.environment = Self.environment(environment)
        process.standardOutput = stdout
        process.standardError = try FileHandle(forWritingTo: logURL)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        do {
            port = try Self.readPort(from: stdout.fileHandleForReading.fileDescriptor, timeout: timeout)
        } catch {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw ServerError("\(error); server log:\n\(Self.tail(of: logURL))")
        }
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: logURL)
    }

    var pid: pid_t { process.processIdentifier }

    /// Sets `process` to run `executable` with `arguments` so that it ends when this test
    /// process does, however it ends (a trap included): through util-linux's `setpriv
    /// --pdeathsig KILL`, which execs it in place (its pid is the program's). The signal
    /// comes when the thread that started it ends: tests start their processes from the
    /// thread that runs them.
    static func endingWithThisProcess(_ process: Process, _ executable: URL, _ arguments: [String], openFiles: Int? = nil) {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        // With `openFiles`, under that open-files limit (soft and hard).
        let limited = openFiles.map { ["/usr/bin/prlimit", "--nofile=\($0):\($0)", "--"] } ?? []
        process.arguments = ["--pdeathsig", "KILL", "--"] + limited + [executable.path] + arguments
    }

    /// Resident memory now (VmRSS), in bytes.
    func residentBytes() throws -> Int { try memory("VmRSS") }

    /// The largest resident memory so far (VmHWM), in bytes.
    func peakResidentBytes() throws -> Int { try memory("VmHWM") }

    /// The process's memory figure `field` of /proc/PID/status, in bytes.
    private func memory(_ field: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
        else { throw CocoaError(.fileReadCorruptFile) }
        return kilobytes * 1024
    }

    /// A client for this server.
    var client: HTTPClient { HTTPClient(port: port) }

    /// Sends SIGTERM (unless `signal` is false: then only waits), waits up to `timeout`
    /// seconds for the process to exit, and returns its exit status (nil if it did not
    /// exit in time: it is then killed).
    @discardableResult
    func terminate(signal: Bool = true, timeout: Double = 15) -> Int32? {
        if signal { sendTerm() }
        return waitForExit(timeout: timeout)
    }

    func sendTerm() {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
    }

    /// Waits up to `timeout` seconds for the process to exit; its exit status, or nil (and
    /// SIGKILL) when it is still running.
    func waitForExit(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        guard !process.isRunning else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        process.waitUntilExit()
        return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
    }

    /// The end of the server's log.
    var log: String { Self.tail(of: logURL) }

    private static func tail(of url: URL) -> String {
        let text = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
        return String(text.suffix(4000))
    }

    /// This process's environment without its `BATCHDIFF_` variables, plus `overrides`.
    static func environment(_ overrides: [String: String]) -> [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("BATCHDIFF_") }.merging(overrides) { $1 }
    }

    /// `batchdiff` in the directory of the test bundle (or of the running test binary).
    static func binaryURL() throws -> URL {
        var candidates = [Bundle(for: ServerProcess.self).bundleURL.deletingLastPathComponent()]
        if let first = CommandLine.arguments.first {
            candidates.append(URL(fileURLWithPath: first).deletingLastPathComponent())
        }
        for directory in candidates {
            let url = directory.appendingPathComponent("batchdiff")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        throw ServerError("no batchdiff executable next to the tests in \(candidates.map(\.path)); build it first")
    }

    /// Reads lines from `fd` until `batchdiff listening on http://HOST:PORT`.
    private static func readPort(from fd: Int32, timeout: Double) throws -> UInt16 {
        let deadline = Date().addingTimeInterval(timeout)
        var text = ""
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("batchdiff listening on ") }),
               let colon = line.lastIndex(of: ":"), let port = UInt16(line[line.index(after: colon)...]) {
                return port
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw ServerError("the server did not announce its port within \(timeout) s; stdout: \(text)") }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(remaining, 1) * 1000))
            if ready < 0 && errno != EINTR { throw ServerError("poll: errno \(errno)") }
            guard ready > 0 else { continue }
            let count = read(fd, &buffer, buffer.count)
            if count == 0 { throw ServerError("the server closed stdout before announcing its port; stdout: \(text)") }
            if count > 0 { text += String(decoding: buffer[0..<count], as: UTF8.self) }
        }
    }
}

struct ServerError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
