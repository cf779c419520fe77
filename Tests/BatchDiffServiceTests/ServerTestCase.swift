import Glibc
import XCTest

/// A test case that starts servers and kills whatever is left of them in tearDown.
class ServerTestCase: XCTestCase {
    private var servers: [ServerProcess] = []

    /// Starts a server with `arguments` and `environment`; it is killed at tearDown if
    /// still running.
    func startServer(
        _ arguments: [String] = [], environment: [String: String] = [:], file: StaticString = #filePath, line: UInt = #line
    ) throws -> ServerProcess {
        do {
            let server = try ServerProcess(arguments, environment: environment)
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
