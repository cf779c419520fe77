import CGlibcExtras
import Glibc
import Synchronization

/// Four guards libmicrohttpd lacks, kept for one daemon.
/// - A gate at accept: in epoll mode libmicrohttpd stops accepting at its connection limit,
///   leaving more clients waiting in the backlog with no answer; the gate counts open
///   connections and refuses the ones past the limit at once, but for
///   `probeConnections` more, let in for health checks alone (a server whose slots are
///   full of event streams still answers its orchestrator).
/// - Deadlines: libmicrohttpd's timeout counts idle time only, so a client sending its
///   headers or its body a byte every few seconds keeps a connection forever. Each
///   connection has a deadline while it sends (the header timeout from its start, then the
///   one its server sets with ``setDeadline(_:seconds:)``); a sweep four times a second, by
///   a task, shuts down the socket of one past its deadline, and libmicrohttpd then closes it.
/// - Hang-ups of parked connections: libmicrohttpd does not watch a suspended connection's
///   socket, so a client that vanishes while its long poll is parked would hold its slot for
///   the whole wait. The sweep polls parked sockets for a hang-up (a reset, or the client's
///   end closed) and tells whoever parked the connection (``ConnectionWatch/watchForHangUp(then:)``).
/// - A floor under the send rate: a client that takes a whole answer slower than
///   `minSendRate` bytes a second, over each ``sendRateWindow`` while the server still
///   holds some of the answer to hand to the socket, is cut off (its answer, shared with
///   other clients, stays, but its slot is freed). Only whole bodies sent from memory are
///   watched, never a parked request or a stream.
final class ConnectionGuard: Sendable {
    private let limit: Int
    /// Seconds a new connection has for its first request's headers.
    private let headerTimeout: Int
    /// Bytes a second a client must read of a whole answer (0: no floor).
    private let minSendRate: Int
    /// Connections let in past the limit for health checks alone (none without any).
    private let probeConnections: Int
    /// Seconds a connection let in for health checks has for its request's headers: a
    /// probe asks at once, and an idle one would hold the slot from the next.
    static let probeHeaderTimeout = 2
    /// Seconds over which a connection's send rate is measured.
    static let sendRateWindow = 30
    /// The connections open within the limit, and those let in past it for health checks:
    /// changed together, so a probe's close never shows a regular slot free for an instant.
    private let open = Mutex<(regular: Int, probes: Int)>((0, 0))
    /// The connections open, for the sweep; changed only when one starts or closes.
    private let watched = Mutex<(watches: [ObjectIdentifier: ConnectionWatch], stopped: Bool)>(([:], false))
    private let sweeper = Mutex<Task<Void, Never>?>(nil)

    init(limit: Int, headerTimeout: Int, minSendRate: Int, probeConnections: Int) {
        self.limit = limit
        self.headerTimeout = headerTimeout
        self.minSendRate = minSendRate
        self.probeConnections = probeConnections
    }

    /// Starts sweeping deadlines.
    func start() {
        let task = Task.detached { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                self?.sweep()
            }
        }
        sweeper.withLock { $0 = task }
    }

    /// Stops sweeping; when it returns, no socket is shut down any more (the daemon may
    /// close them and their numbers be reused).
    func stop() {
        sweeper.withLock { $0?.cancel() }
        watched.withLock { state in
            state.watches = [:]
            state.stopped = true
        }
    }

    /// Whether a new connection may be accepted (for health checks alone, past the limit).
    var admitsConnection: Bool { open.withLock { $0.regular < limit || $0.probes < probeConnections } }

    /// Counts and watches a connection that started on `socket`: one past the limit is
    /// for health checks alone.
    func started(socket: Int32) -> ConnectionWatch {
        let forProbes = open.withLock { open in
            let forProbes = open.regular >= limit
            if forProbes { open.probes += 1 } else { open.regular += 1 }
            return forProbes
        }
        let deadline = instant(in: forProbes ? Self.probeHeaderTimeout : headerTimeout)
        let watch = ConnectionWatch(socket: socket, deadline: deadline, forProbesOnly: forProbes)
        watched.withLock { state in
            guard !state.stopped else { return }
            state.watches[ObjectIdentifier(watch)] = watch
        }
        return watch
    }

    /// Forgets a connection that closed.
    func closed(_ watch: ConnectionWatch?) {
        open.withLock { open in
            if watch?.isForProbesOnly == true { open.probes -= 1 } else { open.regular -= 1 }
        }
        guard let watch else { return }
        _ = watched.withLock { $0.watches.removeValue(forKey: ObjectIdentifier(watch)) }
    }

    /// Gives a connection `seconds` from now to send what it must; 0: no deadline. No lock
    /// shared with other connections is taken: this runs several times per request.
    func setDeadline(_ watch: ConnectionWatch, seconds: Int) {
        watch.deadline.store(seconds == 0 ? 0 : instant(in: seconds), ordering: .relaxed)
    }

    /// The monotonic clock's nanoseconds `seconds` from now (never 0, which means none).
    private func instant(in seconds: Int) -> Int64 {
        Int64(max(1, MonotonicTime.nanoseconds() + seconds * 1_000_000_000))
    }

    private func sweep() {
        let now = instant(in: 0)
        let hungUp = watched.withLock { state -> [@Sendable () -> Void] in
            var parked: [(watch: ConnectionWatch, socket: pollfd)] = []
            for watch in state.watches.values {
                if watch.isParked {
                    parked.append((watch, pollfd(fd: watch.socket, events: Int16(BD_POLLRDHUP), revents: 0)))
                }
                if minSendRate > 0, watch.readsTooSlowly(now: now, minimum: minSendRate * Self.sendRateWindow, window: Self.sendRateWindow) {
                    shutdown(watch.socket, Int32(SHUT_RDWR))
                    watch.stopSending()
                    continue
                }
                let deadline = watch.deadline.load(ordering: .relaxed)
                guard deadline != 0, now > deadline else { continue }
                // The socket is shut down under the lock: a closed connection's number may be reused.
                shutdown(watch.socket, Int32(SHUT_RDWR))
                watch.deadline.store(0, ordering: .relaxed)
            }
            guard !parked.isEmpty else { return [] }
            var sockets = parked.map(\.socket)
            guard poll(&sockets, nfds_t(sockets.count), 0) > 0 else { return [] }
            // POLLHUP and POLLERR are reported whether asked for or not.
            let gone = Int16(BD_POLLRDHUP) | Int16(POLLHUP) | Int16(POLLERR)
            return zip(parked, sockets).compactMap { entry, socket in
                socket.revents & gone != 0 ? entry.watch.takeHangUpHandler() : nil
            }
        }
        for onHangUp in hungUp { onHangUp() }
    }
}

/// One watched connection: its socket, the instant it must have sent what it must (in the
/// monotonic clock's nanoseconds, 0 for none), and what to do if it hangs up while parked.
final class ConnectionWatch: Sendable {
    let socket: Int32
    /// Whether the connection was let in past the limit, for health checks alone.
    let isForProbesOnly: Bool
    fileprivate let deadline: Atomic<Int64>
    private let onHangUp = Mutex<(@Sendable () -> Void)?>(nil)
    /// Bytes of the body being sent handed to the socket so far.
    private let bodyBytesSent = Atomic<Int>(0)
    /// While a body is sent: when the current measure of its rate began (0: no body), and
    /// the bytes sent then. Read and written by the sweep, once begun.
    private let rateWindow = Mutex<(start: Int64, sentAtStart: Int)>((0, 0))

    fileprivate init(socket: Int32, deadline: Int64, forProbesOnly: Bool) {
        self.socket = socket
        self.deadline = Atomic(deadline)
        isForProbesOnly = forProbesOnly
    }

    /// A whole body starts to be sent: its rate is watched from now.
    func startSending() {
        bodyBytesSent.store(0, ordering: .relaxed)
        rateWindow.withLock { $0 = (max(1, Int64(MonotonicTime.nanoseconds())), 0) }
    }

    /// `count` bytes of the body are handed to the socket.
    func sent(upTo count: Int) {
        bodyBytesSent.store(count, ordering: .relaxed)
    }

    /// The body is sent, or its response gone.
    func stopSending() {
        rateWindow.withLock { $0 = (0, 0) }
    }

    /// Whether a body is being sent and less than `minimum` bytes of it went out over the
    /// last `window` seconds; each window that ends well starts the next.
    fileprivate func readsTooSlowly(now: Int64, minimum: Int, window: Int) -> Bool {
        rateWindow.withLock { rate in
            guard rate.start != 0, now - rate.start >= Int64(window) * 1_000_000_000 else { return false }
            let sent = bodyBytesSent.load(ordering: .relaxed)
            guard sent - rate.sentAtStart >= minimum else { return true }
            rate = (now, sent)
            return false
        }
    }

    /// Calls `handler` (once) if the client hangs up while the connection is parked, until
    /// ``stopWatchingForHangUp()``.
    func watchForHangUp(then handler: @escaping @Sendable () -> Void) {
        onHangUp.withLock { $0 = handler }
    }

    /// The connection is no longer parked.
    func stopWatchingForHangUp() {
        onHangUp.withLock { $0 = nil }
    }

    fileprivate var isParked: Bool { onHangUp.withLock { $0 != nil } }

    fileprivate func takeHangUpHandler() -> (@Sendable () -> Void)? {
        onHangUp.withLock { handler in
            defer { handler = nil }
            return handler
        }
    }
}
