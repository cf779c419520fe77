import ArgumentParser

/// Where the server listens (`serve`) or is asked (`healthcheck`).
struct ServerAddress: ParsableArguments {
    @Option(help: "The server's address (BATCHDIFF_HOST).")
    var host = Environment.string("BATCHDIFF_HOST", default: "127.0.0.1")

    @Option(help: "The server's port; 0 for `serve` picks a free one (BATCHDIFF_PORT).")
    var port = Environment.integer(.port, default: 8080)

    func validate() throws {
        try Environment.validate([.port])
    }
}
