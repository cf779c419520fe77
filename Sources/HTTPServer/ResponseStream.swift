import Synchronization

/// The body of a response written as it comes (an event stream), from any thread.
///
/// The server sends what is written as soon as the client's socket takes it; while there is
/// nothing to send, the connection is suspended and holds no thread. A write returns once
/// its bytes are copied into the connection's send buffer (a block at a time, as the
/// socket drains), so a writer never runs ahead of a slow client by more than one write. The stream ends when its writer finishes it, when the client goes
/// away, or when the server shuts down; then every ``onClose(_:)`` handler is called.
public final class ResponseStream: Sendable {
    private struct State {
        /// Writes not yet handed to the socket, in order; `offset` bytes of the first are.
        var queued: [[UInt8]] = []
        var offset = 0
        /// No more writes: the stream ends once the queue is sent.
        var finished = false
        /// The client went away: the stream ends at once, with an error.
        var abandoned = false
        /// The response is gone (sent to its end, or its connection closed).
        var closed = false
        /// The connection is suspended, waiting for a write.
        var waiting = false
        /// Bytes handed to the socket so far.
        var sent = 0
        /// Whether a write is still taken.
        var takesWrites: Bool { !closed && !abandoned && !finished }
        /// Writers waiting for the queue to be sent.
        var writers: [CheckedContinuation<Bool, Never>] = []
        var closeHandlers: [@Sendable () -> Void] = []
        /// How the connection is suspended and resumed, once the response is queued.
        var connection: (suspend: @Sendable () -> Void, resume: @Sendable () -> Void)?
    }

    private let state = Mutex(State())

    init() {}

    /// Sends `pieces` one after another, after what was written before; they are kept as
    /// they are, not copied (a body shared by many streams is held once). Returns true once
    /// they are in the connection's send buffer, false when the stream ended first (they
    /// are dropped).
    @discardableResult
    public func write(_ pieces: [[UInt8]]) async -> Bool {
        let pieces = pieces.filter { !$0.isEmpty }
        guard !pieces.isEmpty else { return state.withLock { $0.takesWrites } }
        return await withCheckedContinuation { (writer: CheckedContinuation<Bool, Never>) in
            let resume = state.withLock { state -> (@Sendable () -> Void)?? in
                guard state.takesWrites else { return nil }
                state.queued.append(contentsOf: pieces)
                state.writers.append(writer)
                return takeWaiting(&state)
            }
            guard let resume else { return writer.resume(returning: false) }
            resume?()
        }
    }

    /// Ends the stream once what was written is sent.
    public func finish() {
        let resume = state.withLock { state -> (@Sendable () -> Void)? in
            state.finished = true
            return takeWaiting(&state)
        }
        resume?()
    }

    /// Calls `handler` once the stream has ended (at once if it has): its writer can stop.
    public func onClose(_ handler: @escaping @Sendable () -> Void) {
        let closed = state.withLock { state in
            if !state.closed { state.closeHandlers.append(handler) }
            return state.closed
        }
        if closed { handler() }
    }

    /// Bytes handed to the socket so far.
    var bytesSent: Int { state.withLock { $0.sent } }

    /// The resumption of a connection waiting for a write, taken (it resumes once).
    private func takeWaiting(_ state: inout State) -> (@Sendable () -> Void)? {
        guard state.waiting else { return nil }
        state.waiting = false
        return state.connection?.resume
    }

    // MARK: The server's side

    /// The response is queued on a connection that `suspend` and `resume` control.
    func attach(suspend: @escaping @Sendable () -> Void, resume: @escaping @Sendable () -> Void) {
        state.withLock { $0.connection = (suspend, resume) }
    }

    /// What the server sends next.
    enum Read {
        /// `count` bytes were copied.
        case bytes(Int)
        /// Nothing to send yet: the connection was suspended until a write.
        case suspended
        /// The stream ended: after everything written, or (`failed`) because the client went away.
        case end(failed: Bool)
    }

    /// Copies what is queued into `buffer`, or suspends the connection while nothing is.
    /// Called by the server on the connection's thread.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Read {
        var sent: [CheckedContinuation<Bool, Never>] = []
        defer { for writer in sent { writer.resume(returning: true) } }
        return state.withLock { state -> Read in
            if state.abandoned { return .end(failed: true) }
            var count = 0
            while count < buffer.count, let first = state.queued.first {
                let taken = min(buffer.count - count, first.count - state.offset)
                first.withUnsafeBytes { bytes in
                    buffer.baseAddress!.advanced(by: count).copyMemory(from: bytes.baseAddress!.advanced(by: state.offset), byteCount: taken)
                }
                count += taken
                state.offset += taken
                if state.offset == first.count {
                    state.queued.removeFirst()
                    state.offset = 0
                }
            }
            if state.queued.isEmpty { swap(&sent, &state.writers) }
            state.sent += count
            if count > 0 { return .bytes(count) }
            if state.finished { return .end(failed: false) }
            // Suspended under the lock, so that a write's resume comes after it.
            state.waiting = true
            state.connection?.suspend()
            return .suspended
        }
    }

    /// The client went away (its socket hung up): the stream ends at once.
    func abandon() {
        let resume = state.withLock { state -> (@Sendable () -> Void)? in
            state.abandoned = true
            return takeWaiting(&state)
        }
        resume?()
    }

    /// The response is gone (or was never sent): writers still waiting learn it, and the
    /// close handlers run. Later calls do nothing.
    func close() {
        let (writers, handlers) = state.withLock { state in
            state.closed = true
            state.queued = []
            defer { (state.writers, state.closeHandlers) = ([], []) }
            return (state.writers, state.closeHandlers)
        }
        for writer in writers { writer.resume(returning: false) }
        for handler in handlers { handler() }
    }
}
