import CGlibcExtras
import Glibc
import Synchronization

/// Three guards libmicrohttpd lacks, kept for one daemon.
/// - A gate at accept: in epoll mode libmicrohttpd stops accepting at its connection limit,
///   leaving more clients waiting in the backlog with no answer; the gate counts open
///   connections and refuses the ones past the limit at once.
/// - Deadlines: libmicrohttpd's timeout counts idle time only, so a client sending its
///   headers or its body a byte every few seconds keeps a connection forever. Each
///   connection has a deadline while it sends (the header timeout from its start, then the
///   one its server sets with ``setDeadline(_:seconds:)``); a sweep four times a second, by
///   a task, shuts down the socket of one past its deadline, and libmicrohttpd then closes it.
/// - Hang-ups of parked connections: libmicrohttpd does not watch a suspended connection's
///   socket, so a client that vanishes while its long poll is parked would hold its slot for
///   the whole wait. The sweep polls parked sockets for a hang-up (a reset, or the client's
///   end closed) and tells whoever parked the connection (``watchForHangUp(_:then:)``).
final class ConnectionGuard: Sendable {
    /// A watched connection: its socket, the instant it must have sent what it must, and
    /// what to do if it hangs up while parked.
    private struct Watch {
        var socket: Int32
        var deadline: ContinuousClock.Instant?
        var onHangUp: (@Sendable () -> Void)?
    }

    /// A connection's number in the watch, which libmicrohttpd keeps for it.
    typealias Token = Int

    private let limit: Int
    private let headerTimeout: Duration
    private let open = Atomic<Int>(0)
    private let watched = Mutex<(next: Token, watches: [Token: Watch], stopped: Bool)>((1, [:], false))
    private let sweeper = Mutex<Task<Void, Never>?>(nil)

    init(limit: Int, headerTimeout: Int) {
        self.limit = limit
        self.headerTimeout = .seconds(headerTimeout)
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

    /// Whether a new connection may be accepted.
    var admitsConnection: Bool { open.load(ordering: .relaxed) < limit }

    /// Counts and watches a connection that started on `socket`.
    func started(socket: Int32) -> Token {
        open.add(1, ordering: .relaxed)
        let deadline = ContinuousClock.now + headerTimeout
        return watched.withLock { state in
            let token = state.next
            guard !state.stopped else { return token }
            state.next += 1
            state.watches[token] = Watch(socket: socket, deadline: deadline)
            return token
        }
    }

    /// Forgets a connection that closed.
    func closed(_ token: Token?) {
        open.subtract(1, ordering: .relaxed)
        guard let token else { return }
        _ = watched.withLock { $0.watches.removeValue(forKey: token) }
    }

    /// Calls `onHangUp` (once) if the client hangs up while the connection is parked,
    /// until ``stopWatchingForHangUp(_:)``.
    func watchForHangUp(_ token: Token, then onHangUp: @escaping @Sendable () -> Void) {
        watched.withLock { $0.watches[token]?.onHangUp = onHangUp }
    }

    /// The connection is no longer parked.
    func stopWatchingForHangUp(_ token: Token) {
        watched.withLock { $0.watches[token]?.onHangUp = nil }
    }

    /// Gives a connection `seconds` from now to send what it must; 0: no deadline.
    func setDeadline(_ token: Token, seconds: Int) {
        let deadline = seconds == 0 ? nil : ContinuousClock.now + .seconds(seconds)
        watched.withLock { $0.watches[token]?.deadline = deadline }
    }

    private func sweep() {
        let now = ContinuousClock.now
        let hungUp = watched.withLock { state -> [@Sendable () -> Void] in
            var parked: [(token: Token, socket: pollfd)] = []
            for (token, watch) in state.watches {
                if watch.onHangUp != nil {
                    parked.append((token, pollfd(fd: watch.socket, events: Int16(BD_POLLRDHUP), revents: 0)))
                }
                guard let deadline = watch.deadline, now > deadline else { continue }
                shutdown(watch.socket, Int32(SHUT_RDWR))
                state.watches[token]?.deadline = nil
            }
            guard !parked.isEmpty else { return [] }
            var sockets = parked.map(\.socket)
            guard poll(&sockets, nfds_t(sockets.count), 0) > 0 else { return [] }
            // POLLHUP and POLLERR are reported whether asked for or not.
            let gone = Int16(BD_POLLRDHUP) | Int16(POLLHUP) | Int16(POLLERR)
            return zip(parked, sockets).compactMap { entry, socket in
                guard socket.revents & gone != 0 else { return nil }
                defer { state.watches[entry.token]?.onHangUp = nil }
                return state.watches[entry.token]?.onHangUp
            }
        }
        for onHangUp in hungUp { onHangUp() }
    }
}
