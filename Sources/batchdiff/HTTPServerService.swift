import BatchDiffEndpoints
import Dispatch
import HTTPServer
import Logging
import ServiceLifecycle

/// The HTTP server as a service of the process's `ServiceGroup`: it starts listening when
/// the group runs, and at graceful shutdown (SIGTERM, SIGINT) it stops as
/// ``HTTPServer/shutdown(grace:release:)`` does: no new connections, new requests refused
/// with 503, parked long polls answered, requests in flight given `grace` to finish.
struct HTTPServerService: Service {
    let configuration: HTTPServerConfiguration
    let service: BatchDiffService
    let grace: Duration
    let logger: Logger
    /// Told the port once the server listens.
    let listening: @Sendable (Int) -> Void

    func run() async throws {
        let server = try HTTPServer(
            configuration: configuration, admit: service.admit, refusal: service.refusal, observer: service.observe
        )
        listening(server.port)
        // Returns when the group shuts down gracefully; throws when it is cancelled, which
        // ends the server the same way.
        try? await gracefulShutdown()
        logger.notice("shutting down: finishing requests in flight")
        // The shutdown blocks while requests finish: on a thread of its own, not the
        // cooperative pool's.
        await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async { [service, grace] in
                server.shutdown(grace: grace, release: service.releaseParkedRequests)
                finished.resume()
            }
        }
    }
}
