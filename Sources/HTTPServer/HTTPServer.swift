import Foundation
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd: a pool of epoll threads, body limits, idle and
/// header timeouts, a connection limit, long polls that hold no thread, and graceful
/// shutdown.
///
/// The service admits each request from its head (``HTTPAdmission``), then sees the whole
/// request as a plain ``HTTPRequest`` and answers with ``HTTPReply``; it is called on the
/// server's threads, concurrently, so it must be thread-safe.
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
    ///   - admit: called once per request when its headers are in (the request's `body`
    ///     is empty then): refuses it, or accepts it with what answers it once the body
    ///     is read.
    ///   - refusal: the response for requests the server answers by itself (413, 503).
    ///   - observer: called once per finished request, for logs and metrics.
    public init(
        configuration: HTTPServerConfiguration,
        admit: @escaping @Sendable (HTTPRequest) -> HTTPAdmission,
        refusal: @escaping @Sendable (HTTPServerRefusal) -> HTTPResponse,
        observer: @escaping @Sendable (HTTPExchange) -> Void
    ) throws {
        lifecycle = RequestLifecycle(configuration, admit: admit, refusal: refusal, observer: observer)
        daemon = try Daemon.start(configuration, lifecycle: lifecycle)
        port = daemon.port
    }

    /// Stops gracefully: stops accepting connections, refuses new requests with 503, calls
    /// `release` so parked requests can be answered, ends the streams (``ResponseStream``)
    /// once what was written is sent, waits up to `grace` for the requests in flight to
    /// finish, answers any request still parked with 503, then stops. Later calls do nothing.
    public func shutdown(grace: Duration, release: () -> Void) {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        daemon.quiesce()
        lifecycle.startDraining()
        release()
        lifecycle.endStreams()
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
