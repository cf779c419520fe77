import ArgumentParser
import HTTPServer

/// `batchdiff healthcheck`: exits 0 when the server answers `GET /healthz` with 200.
struct HealthcheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "healthcheck",
        abstract: "Exit 0 when the server answers GET /healthz with 200 (for container health checks)."
    )

    @OptionGroup var address: ServerAddress

    func run() throws {
        let status = HealthProbe.status(host: address.host, port: address.port)
        guard status == 200 else {
            throw CommandFailure("GET /healthz on \(address.host):\(address.port): \(status.map { "status \($0)" } ?? "no answer")")
        }
    }
}
