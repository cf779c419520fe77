import Foundation

/// One finished run of the `batchdiff` executable (or of another command).
struct CommandRun {
    var status: Int32
    var output: String
    var error: String

    /// Runs `batchdiff arguments`, with `input` on standard input and `environment` on top
    /// of this process's environment without its `BATCHDIFF_` variables, and waits for it:
    /// up to `timeout` seconds, then it is killed (a command that should have stopped, a
    /// server that should have refused to start, never stalls the tests).
    init(_ arguments: [String], input: String? = nil, environment: [String: String] = [:], timeout: Double = 60) throws {
        try self.init(executable: try ServerProcess.binaryURL(), arguments, input: input, environment: environment, timeout: timeout)
    }

    /// Runs `executable` with `arguments` as ``init(_:input:environment:timeout:)`` runs `batchdiff`.
    init(executable: URL, _ arguments: [String], input: String? = nil, environment: [String: String] = [:], timeout: Double = 60) throws {
        let process = Process()
        ServerProcess.endingWithThisProcess(process, executable, arguments)
        process.environment = ServerProcess.environment(environment)
        let output = Pipe()
        let error = Pipe()
        let standardInput = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = standardInput
        try process.run()
        let pid = process.processIdentifier
        let deadline = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: deadline)
        defer { deadline.cancel() }
        if let input { standardInput.fileHandleForWriting.write(Data(input.utf8)) }
        try standardInput.fileHandleForWriting.close()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        status = process.terminationStatus
        self.output = String(decoding: outputData, as: UTF8.self)
        self.error = String(decoding: errorData, as: UTF8.self)
    }
}
