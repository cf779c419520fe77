import Foundation

/// `BatchDiffBenchmark e2e SERVER_BINARY`: the whole `POST /diff` of the 100,000-element
/// workload (parse, diff, answer) against the time Foundation's JSONSerialization needs
/// only to parse the same body, in the same run.
enum EndToEnd {
    static func run(serverBinary: String, workload: ListWorkload, runs: Int) throws {
        var body = Data(#"{"old":"#.utf8)
        body.append(try JSONSerialization.data(withJSONObject: workload.source))
        body.append(Data(#","new":"#.utf8))
        body.append(try JSONSerialization.data(withJSONObject: workload.target))
        body.append(Data("}".utf8))
        let bodyFile = FileManager.default.temporaryDirectory.appendingPathComponent("batchdiff-e2e-\(getpid()).json")
        try body.write(to: bodyFile)
        defer { try? FileManager.default.removeItem(at: bodyFile) }

        let server = Process()
        server.executableURL = URL(fileURLWithPath: serverBinary)
        server.arguments = ["serve", "--host", "127.0.0.1", "--port", "0", "--log-level", "warning"]
        let output = Pipe()
        server.standardOutput = output
        try server.run()
        defer { server.terminate(); server.waitUntilExit() }
        var printed = ""
        while !printed.contains("\n") {
            let piece = output.fileHandleForReading.availableData
            guard !piece.isEmpty else { break }
            printed += String(decoding: piece, as: UTF8.self)
        }
        let line = printed.split(separator: "\n").first ?? ""
        guard let port = line.split(separator: ":").last.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) else {
            throw CommandError("the server printed no port: \(printed)")
        }

        let request = { () -> Double? in
            let curl = Process()
            curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            curl.arguments = ["-s", "-o", "/dev/null", "-w", "%{http_code} %{time_total}", "-H", "Content-Type: application/json",
                              "--data-binary", "@\(bodyFile.path)", "http://127.0.0.1:\(port)/diff"]
            let answer = Pipe()
            curl.standardOutput = answer
            try? curl.run()
            curl.waitUntilExit()
            let fields = String(decoding: answer.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: " ")
            guard fields.first == "200", let seconds = fields.last.flatMap({ Double($0) }) else { return nil }
            return seconds * 1000
        }
        _ = request()  // warm up
        let requestTimes = (0..<runs).compactMap { _ in request() }.sorted()
        guard requestTimes.count == runs else { throw CommandError("POST /diff failed in \(runs - requestTimes.count) of \(runs) runs") }
        let parse = measure(runs: runs) { try! JSONSerialization.jsonObject(with: body) }
        let requestMedian = requestTimes[requestTimes.count / 2]
        report("POST /diff, \(workload.name), \(String(format: "%.1f", Double(body.count) / 1e6)) MB body, median of \(runs)")
        report("  whole request (curl: send, parse, diff, answer)  \(format(requestMedian))")
        report("  JSONSerialization.jsonObject parse only          \(format(parse.milliseconds))")
        report("  ratio      the request takes \(String(format: "%.2f", requestMedian / parse.milliseconds)) of the parse-only time (target <= 1)")
    }
}

struct CommandError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
