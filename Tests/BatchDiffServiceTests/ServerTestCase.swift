import Glibc
import XCTest

/// A test case that starts servers and kills whatever is left of them in tearDown.
class ServerTestCase: XCTestCase {
    private var servers: [ServerProcess] = []

    /// Starts a server with `arguments` and `environment` (under an open-files limit of
    /// `openFiles`, when given); it is killed at tearDown if still running.
    func startServer(
        _ arguments: [String] = [], environment: [String: String] = [:], openFiles: Int? = nil, file: StaticString = #filePath, line: UInt = #line
    ) throws -> ServerProcess {
        do {
            let server = try ServerProcess(arguments, environment: environment, openFiles: openFiles)
            servers.append(server)
            return server
        } catch {
            XCTFail("could not start the server: \(error)", file: file, line: line)
            throw error
        }
    }

    override func tearDown() {
        for server in servers where server.process.isRunning {
            kill(server.pid, SIGKILL)
            server.process.waitUntilExit()
        }
        servers = []
        super.tearDown()
    }
}
