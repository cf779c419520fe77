import ArgumentParser

struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Run the HTTP server.")
    func run() throws {}
}

struct HealthcheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "healthcheck", abstract: "Exit 0 when the server answers GET /healthz with 200.")
    func run() throws {}
}
