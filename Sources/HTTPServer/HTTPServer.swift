import Foundation
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd: a pool of epoll threads, body limits, idle and
/// header timeouts, a connection limit, long polls that hold no thread, and graceful
/// shutdown.
///
/// The handler sees plain ``HTTPRequest`` values and answers with ``HTTPReply``; it is
/// called on the server's threads, concurrently, so it must be thread-safe.
public final class HTTPServer: Sendable {
    private let daemon: Daemon
    private let lifecycle: RequestLifecycle
    private let stopped = Atomic<Bool>(false)
    /// The port the server listens on.
    public let port: Int

    /// Starts serving at once. Throws ``HTTPServerError`` for a setting out of range or an
    /// address it cannot listen on.
    ///
    /// - Parameters:
    ///   - handler: answers a request, body included.
    ///   - screen: given a request that announces a body, before the body is read (its
    ///     `body` is empty), the response that refuses it, or nil to read the body and call
    ///     `handler`. A refused body is never read: no `100 Continue`, and the connection
    ///     closes after the answer.
    ///   - refusal: the response for requests the server answers by itself (413, 503).
    ///   - observer: called once per finished request, for logs and metrics.
    public init(
        configuration: HTTPServerConfiguration,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPReply,
        screen: @escaping @Sendable (HTTPRequest) -> HTTPResponse? = { _ in nil },
        refusal: @escaping @Sendable (HTTPServerRefusal) -> HTTPResponse,
        observer: @escaping @Sendable (HTTPExchange) -> Void
    ) throws {
        lifecycle = RequestLifecycle(
            bodyLimit: configuration.bodyLimit, headerTimeout: configuration.headerTimeout, bodyTimeout: configuration.bodyTimeout,
            handler: handler, screen: screen, refusal: refusal, observer: observer
        )
        daemon = try Daemon.start(configuration, lifecycle: lifecycle)
        port = daemon.port
    }

    /// Stops gracefully: stops accepting connections, refuses new requests with 503, calls
    /// `release` so parked requests can be answered, waits up to `grace` for the requests in
    /// flight to finish, answers any request still parked with 503, then stops. Later calls
    /// do nothing.
    public func shutdown(grace: Duration, release: () -> Void) {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        daemon.quiesce()
        lifecycle.startDraining()
        release()
        waitForRequestsInFlight(upTo: grace)
        lifecycle.answerParked(with: lifecycle.refusal(.shuttingDown))
        waitForRequestsInFlight(upTo: .seconds(1))
        daemon.stop()
    }

    deinit {
        if !stopped.load(ordering: .acquiring) { daemon.stop() }
    }

    private func waitForRequestsInFlight(upTo limit: Duration) {
        let deadline = ContinuousClock.now + limit
        while lifecycle.requestsInFlight > 0 && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
    }
}
