import Foundation

/// An HTTP/1.1 server on libmicrohttpd: a pool of epoll threads, body limits, idle
/// timeouts, a connection limit, long polls that hold no thread, and graceful shutdown.
///
/// The handler sees plain ``HTTPRequest`` values and answers with ``HTTPReply``; it is
/// called on the server's threads, concurrently, so it must be thread-safe.
public final class HTTPServer: Sendable {
    private let daemon: Daemon
    private let router: RequestRouter
    /// The port the server listens on.
    public let port: Int

    /// Starts serving at once.
    ///
    /// - Parameters:
    ///   - refusal: the response for requests the server answers by itself (413, 503).
    ///   - observer: called once per finished request, for logs and metrics.
    public init(
        configuration: HTTPServerConfiguration,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPReply,
        refusal: @escaping @Sendable (HTTPServerRefusal) -> HTTPResponse,
        observer: @escaping @Sendable (HTTPExchange) -> Void
    ) throws {
        router = RequestRouter(bodyLimit: configuration.bodyLimit, handler: handler, refusal: refusal, observer: observer)
        daemon = try Daemon.start(configuration, router: router)
        port = daemon.port
    }

    /// Stops gracefully: stops accepting connections, refuses new requests with 503, calls
    /// `release` so parked requests can be answered, waits up to `grace` for the requests in
    /// flight to finish, answers any request still parked with 503, then stops.
    public func shutdown(grace: Duration, release: () -> Void) {
        daemon.quiesce()
        router.startDraining()
        release()
        waitForRequestsInFlight(upTo: grace)
        router.answerParked(with: router.refusal(.shuttingDown))
        waitForRequestsInFlight(upTo: .seconds(1))
        daemon.stop()
    }

    private func waitForRequestsInFlight(upTo limit: Duration) {
        let deadline = ContinuousClock.now + limit
        while router.requestsInFlight > 0 && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
    }
}
