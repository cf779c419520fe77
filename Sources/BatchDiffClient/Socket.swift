#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation

/// A TCP connection over POSIX sockets, every wait bounded by a deadline: the one place the
/// client touches file descriptors and unsafe pointers.
///
/// Its calls block; ``SocketTransport`` makes them off the caller's thread. ``abort()`` may
/// be called from any thread, from the moment the socket exists: it wakes a blocked call,
/// a connect included, which then throws.
final class Socket: @unchecked Sendable {  // `descriptor` and `aborted` are read and written under `lock`
    private let lock = NSLock()
    /// The connection's descriptor, or the one being connected; -1 before.
    private var descriptor: Int32 = -1
    private var aborted = false

    init() {}

    /// Connects to `host` (a name or an address) at `port` before `deadline`, trying each
    /// address the name resolves to in turn.
    func connect(host: String, port: UInt16, deadline: DispatchTime) throws(TransportError) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &found)
        guard status == 0, let first = found else {
            throw TransportError("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(first) }
        var lastError = "no address"
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let address = candidate {
            candidate = address.pointee.ai_next
            let descriptor = socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
            guard descriptor >= 0 else { continue }
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            var one: Int32 = 1
            setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            #if canImport(Darwin)
            // A send to a closed peer must fail, not raise SIGPIPE (Glibc passes MSG_NOSIGNAL).
            setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
            #endif
            // Held before connecting, so that an abort wakes the connect's wait.
            guard hold(descriptor) else {
                close(descriptor)
                throw TransportError("cancelled")
            }
            #if canImport(Glibc)
            let started = Glibc.connect(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen)
            #else
            let started = Darwin.connect(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen)
            #endif
            if started == 0 || errno == EINPROGRESS,
               Self.wait(descriptor, for: Int16(POLLOUT), until: deadline) {
                var error: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length)
                try checkAborted()
                if error == 0 { return }
                lastError = String(cString: strerror(error))
            } else {
                try checkAborted()
                lastError = DispatchTime.now() >= deadline ? "timed out" : String(cString: strerror(errno))
            }
            _ = hold(-1)
            close(descriptor)
        }
        throw TransportError("cannot connect to \(host):\(port): \(lastError)")
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Makes `descriptor` the socket's; false when the socket was aborted already.
    private func hold(_ descriptor: Int32) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        self.descriptor = descriptor
        return !aborted
    }

    /// Sends all of `bytes` before `deadline`.
    func send(_ bytes: [UInt8], deadline: DispatchTime) throws(TransportError) {
        var offset = 0
        while offset < bytes.count {
            try checkAborted()
            let sent = bytes[offset...].withUnsafeBytes { raw in
                #if canImport(Glibc)
                Glibc.send(descriptor, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL))
                #else
                Darwin.send(descriptor, raw.baseAddress, raw.count, 0)
                #endif
            }
            if sent > 0 {
                offset += sent
            } else if sent < 0 && (errno == EAGAIN || errno == EINTR) {
                guard Self.wait(descriptor, for: Int16(POLLOUT), until: deadline) else { throw timeoutOrAbort("sending") }
            } else {
                throw TransportError("the connection broke while sending: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Receives what has arrived (up to `chunk`'s size) into `chunk`, waiting until something
    /// does before `deadline`; returns the bytes received, 0 when the peer closed the connection.
    func receive(into chunk: inout [UInt8], deadline: DispatchTime) throws(TransportError) -> Int {
        while true {
            try checkAborted()
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count >= 0 {
                try checkAborted()
                return count
            }
            guard errno == EAGAIN || errno == EINTR else {
                throw TransportError("the connection broke while receiving: \(String(cString: strerror(errno)))")
            }
            guard Self.wait(descriptor, for: Int16(POLLIN), until: deadline) else { throw timeoutOrAbort("waiting for the answer") }
        }
    }

    /// Wakes a call blocked on this socket from another thread; it throws "cancelled".
    func abort() {
        lock.lock()
        aborted = true
        let descriptor = self.descriptor
        lock.unlock()
        if descriptor >= 0 { shutdown(descriptor, Int32(SHUT_RDWR)) }
    }

    private var isAborted: Bool {
        lock.lock()
        defer { lock.unlock() }
        return aborted
    }

    private func checkAborted() throws(TransportError) {
        if isAborted { throw TransportError("cancelled") }
    }

    private func timeoutOrAbort(_ doing: String) -> TransportError {
        isAborted ? TransportError("cancelled") : TransportError("timed out \(doing)")
    }

    /// Waits until `descriptor` is ready for `events` (or hung up); false when `deadline` passed.
    private static func wait(_ descriptor: Int32, for events: Int16, until deadline: DispatchTime) -> Bool {
        while true {
            let now = DispatchTime.now()
            guard now < deadline else { return false }
            let milliseconds = Int32(min((deadline.uptimeNanoseconds - now.uptimeNanoseconds) / 1_000_000 + 1, 60_000))
            var request = pollfd(fd: descriptor, events: events, revents: 0)
            let ready = poll(&request, 1, milliseconds)
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { return true }  // the call that follows reports the error
        }
    }
}
