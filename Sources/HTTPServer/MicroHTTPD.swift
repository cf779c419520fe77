import CMicroHTTPD
import CMicroHTTPDShim
import Gzip
import Foundation
import Glibc
import Synchronization

// Every unsafe pointer and C callback of the server lives in this file: libmicrohttpd's
// daemon, connections and per-request state cross into Swift here and nowhere else.

/// A libmicrohttpd connection handle, valid while its request is being served.
struct Connection: @unchecked Sendable {
    let pointer: OpaquePointer
    /// The daemon's guard, which watches this connection's deadline.
    let connections: ConnectionGuard

    func suspend() { MHD_suspend_connection(pointer) }

    /// Gives the connection `seconds` from now to send what it must (a body, the next
    /// request's headers) before it is shut down; 0: no deadline.
    func setDeadline(seconds: Int) {
        guard let watch else { return }
        connections.setDeadline(watch, seconds: seconds)
    }

    /// Calls `onHangUp` if the client hangs up while the connection is suspended (parked).
    func watchForHangUp(then onHangUp: @escaping @Sendable () -> Void) {
        watch?.watchForHangUp(then: onHangUp)
    }

    /// The connection's request is answered: it is no longer parked.
    func stopWatchingForHangUp() {
        watch?.stopWatchingForHangUp()
    }

    /// The connection's response is sent (or gone): its send rate no longer matters.
    func stopWatchingSendRate() {
        watch?.stopSending()
    }

    /// The guard's watch of the connection, kept (retained) as its socket context (see
    /// `connectionNotified`).
    private var watch: ConnectionWatch? {
        bd_connection_info(pointer, .CONNECTION_INFO_SOCKET_CONTEXT)?.pointee.socket_context.map {
            Unmanaged<ConnectionWatch>.fromOpaque($0).takeUnretainedValue()
        }
    }
    func resume() { MHD_resume_connection(pointer) }

    /// The request headers by lowercased name; repeated lines of one header are joined
    /// with ", ", as RFC 9110 section 5.3 reads them.
    func headers() -> [String: String] { values(.HEADER_KIND, isHeader: true) }

    /// The query arguments, percent-decoded, by name as sent, the first of repeats.
    func queryArguments() -> [String: String] { values(.GET_ARGUMENT_KIND, isHeader: false) }

    /// The client's address, numeric (`127.0.0.1`, `::1`); empty when it is not known.
    func clientAddress() -> String {
        guard let address = bd_connection_info(pointer, .CONNECTION_INFO_CLIENT_ADDRESS)?.pointee.client_addr else { return "" }
        let length = address.pointee.sa_family == sa_family_t(AF_INET6) ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(address, socklen_t(length), &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else { return "" }
        return String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func values(_ kind: MHD_ValueKind, isHeader: Bool) -> [String: String] {
        var collected = (values: [String: String](), isHeader: isHeader)
        withUnsafeMutablePointer(to: &collected) { collected in
            _ = MHD_get_connection_values(pointer, kind, { cls, _, key, value in
                guard let cls, let key else { return .YES }
                let collected = cls.assumingMemoryBound(to: (values: [String: String], isHeader: Bool).self)
                let isHeader = collected.pointee.isHeader
                let name = isHeader ? String(cString: key).lowercased() : String(cString: key)
                let text = value.map { String(cString: $0) } ?? ""
                if let first = collected.pointee.values[name] {
                    if isHeader { collected.pointee.values[name] = first + ", " + text }
                } else {
                    collected.pointee.values[name] = text
                }
                return .YES
            }, collected)
        }
        return collected.values
    }

    /// Whether the connection was let in past the connection limit, for health checks only.
    var isForProbesOnly: Bool { watch?.isForProbesOnly ?? false }

    /// Sends `response`; the connection closes afterwards when `close` is set. A small
    /// body is copied into libmicrohttpd; a larger one is read from where it lies, a block
    /// at a time as the socket drains (``SentBody``): a body shared by many answers is held
    /// once, however slowly its clients read, and the connection's send rate is watched.
    @discardableResult
    func queue(_ response: HTTPResponse, close: Bool) -> MHD_Result {
        let handle: OpaquePointer?
        if response.body.count < SentBody.minimumSize {
            handle = response.body.withUnsafeBytes { body in
                MHD_create_response_from_buffer(body.count, UnsafeMutableRawPointer(mutating: body.baseAddress), .RESPMEM_MUST_COPY)
            }
        } else {
            let watch = self.watch
            watch?.startSending()
            let context = Unmanaged.passRetained(SentBody(bytes: response.body, watch: watch))
            handle = MHD_create_response_from_callback(UInt64(response.body.count), SentBody.blockSize, bodyReader, context.toOpaque(), bodyFreed)
            if handle == nil { context.release() }
        }
        guard let handle else { return .NO }
        return queue(handle, status: response.status, headers: response.headers, close: close)
    }

    /// Queues the response `handle` with `status` and `headers` (and `Connection: close`
    /// when `close`), then lets it go: libmicrohttpd keeps it until it is sent.
    private func queue(_ handle: OpaquePointer, status: Int, headers: [(name: String, value: String)], close: Bool) -> MHD_Result {
        defer { MHD_destroy_response(handle) }
        // Through withCString: a String passed as a C string argument is copied into a new
        // array first (two allocations a header).
        for header in headers {
            header.name.withCString { name in
                header.value.withCString { value in _ = MHD_add_response_header(handle, name, value) }
            }
        }
        if close { MHD_add_response_header(handle, "Connection", "close") }
        return MHD_queue_response(pointer, UInt32(status), handle)
    }
}

extension Connection {
    /// Sends `head`'s status and headers, then `body` as it is written (chunked; for an
    /// HTTP/1.0 client, until the connection closes). The connection closes afterwards.
    @discardableResult
    func queue(_ head: HTTPResponse, streaming body: ResponseStream) -> MHD_Result {
        let context = Unmanaged.passRetained(body)
        guard let handle = MHD_create_response_from_callback(bd_size_unknown, 1 << 10, streamReader, context.toOpaque(), streamFreed) else {
            context.takeRetainedValue().close()
            return .NO
        }
        return queue(handle, status: head.status, headers: head.headers, close: true)
    }
}

/// Hands libmicrohttpd the next bytes of a ``ResponseStream``; with none yet, the stream
/// suspends the connection and 0 is returned, as libmicrohttpd asks.
private let streamReader: MHD_ContentReaderCallback = { context, _, buffer, size in
    guard let context, let buffer else { return bd_content_reader_end_with_error }
    let stream = Unmanaged<ResponseStream>.fromOpaque(context).takeUnretainedValue()
    switch stream.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: size)) {
    case .bytes(let count): return count
    case .suspended: return 0
    case .end(let failed): return failed ? bd_content_reader_end_with_error : bd_content_reader_end_of_stream
    }
}

/// A whole body as libmicrohttpd reads it (``Connection/queue(_:close:)``): the bytes, held
/// (not copied) until the response is gone, and the watch its progress is reported to.
private final class SentBody {
    /// Bodies from this size are read from where they lie; smaller ones are copied whole.
    static let minimumSize = 32 << 10
    /// The most libmicrohttpd reads at a time, and the buffer it keeps for the connection.
    static let blockSize = 32 << 10

    let bytes: [UInt8]
    let watch: ConnectionWatch?

    init(bytes: [UInt8], watch: ConnectionWatch?) {
        self.bytes = bytes
        self.watch = watch
    }
}

/// Hands libmicrohttpd the body's bytes from `position`, as many as fit.
private let bodyReader: MHD_ContentReaderCallback = { context, position, buffer, size in
    guard let context, let buffer else { return bd_content_reader_end_with_error }
    let body = Unmanaged<SentBody>.fromOpaque(context).takeUnretainedValue()
    let start = Int(position)
    guard start < body.bytes.count else { return bd_content_reader_end_of_stream }
    let count = min(size, body.bytes.count - start)
    body.bytes.withUnsafeBytes { bytes in
        UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress! + start, byteCount: count)
    }
    if start + count == body.bytes.count {
        // All of it is with libmicrohttpd and the kernel now: how fast the client takes the
        // rest is the idle timeout's business, not the rate's.
        body.watch?.stopSending()
    } else {
        body.watch?.sent(upTo: start + count)
    }
    return count
}

/// The response of a ``SentBody`` is gone: the body is released.
private let bodyFreed: MHD_ContentReaderFreeCallback = { context in
    guard let context else { return }
    Unmanaged<SentBody>.fromOpaque(context).release()
}

/// The streamed response is gone: the stream closes and is released.
private let streamFreed: MHD_ContentReaderFreeCallback = { context in
    guard let context else { return }
    Unmanaged<ResponseStream>.fromOpaque(context).takeRetainedValue().close()
}

/// A running libmicrohttpd daemon.
struct Daemon: @unchecked Sendable {
    let pointer: OpaquePointer
    /// The callbacks' context, retained while the daemon runs.
    let lifecycle: Unmanaged<RequestLifecycle>

    /// Starts a daemon that hands every request to `lifecycle`, which it keeps alive until
    /// ``stop()``: an epoll thread pool that allows suspending connections and quiescing.
    static func start(_ configuration: HTTPServerConfiguration, lifecycle: RequestLifecycle) throws -> Daemon {
        try configuration.validate()
        let context = Unmanaged.passRetained(lifecycle)
        let daemon = try withResolvedAddress(host: configuration.host, port: configuration.port, forListening: true) { address in
            var flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue | MHD_USE_ITC.rawValue
            if address.pointee.ai_family == AF_INET6 { flags |= MHD_USE_IPv6.rawValue }
            let options = [
                MHD_OptionItem(option: .SOCK_ADDR, value: 0, ptr_value: UnsafeMutableRawPointer(address.pointee.ai_addr)),
                MHD_OptionItem(option: .THREAD_POOL_SIZE, value: configuration.threads, ptr_value: nil),
                // The gate refuses first; libmicrohttpd's own limit only backs it up.
                MHD_OptionItem(option: .CONNECTION_LIMIT, value: configuration.connectionLimit + 64, ptr_value: nil),
                MHD_OptionItem(option: .CONNECTION_TIMEOUT, value: configuration.connectionTimeout, ptr_value: nil),
                MHD_OptionItem(option: .CONNECTION_MEMORY_LIMIT, value: configuration.headerMemoryLimit, ptr_value: nil),
                MHD_OptionItem(option: .END, value: 0, ptr_value: nil),
            ]
            let opaque = context.toOpaque()
            return bd_start_daemon(
                UInt32(flags), UInt16(configuration.port), acceptPolicy, opaque, accessHandler, opaque, requestCompleted, opaque,
                connectionNotified, opaque, unescape, nil, options
            )
        }
        guard let daemon else {
            context.release()
            throw HTTPServerError(description: "cannot listen on \(configuration.host):\(configuration.port) (address in use, or not allowed)")
        }
        lifecycle.connections.start()
        return Daemon(pointer: daemon, lifecycle: context)
    }

    var port: Int { Int(bd_daemon_info(pointer, .DAEMON_INFO_BIND_PORT)?.pointee.port ?? 0) }

    /// Stops accepting connections; those open are served on.
    func quiesce() {
        let socket = MHD_quiesce_daemon(pointer)
        if socket != MHD_INVALID_SOCKET { close(socket) }
    }

    /// Stops the daemon; call once.
    func stop() {
        lifecycle.takeUnretainedValue().connections.stop()
        MHD_stop_daemon(pointer)
        lifecycle.release()
    }
}

/// Why the server could not start.
public struct HTTPServerError: Error, CustomStringConvertible {
    public var description: String
}

/// The state of one request between libmicrohttpd's calls: the body read so far, whether
/// it was answered, and the pending answer of a parked request.
final class RequestState {
    let method: String
    let path: String
    /// When its headers were in (``MonotonicTime``).
    let started = MonotonicTime.nanoseconds()
    var headers: [String: String] = [:]
    var query: [String: String] = [:]
    var clientAddress = ""
    /// The service's decision from the head, kept until the body is in.
    var admission: HTTPAdmission?
    var body: [UInt8] = []
    /// For a body sent `Content-Encoding: gzip`: what inflates it as it arrives.
    var inflater: GzipInflater?
    /// Why a gzip body could not be inflated; it is read and dropped, then answered with 400.
    var undecodable: String?
    var bytesIn = 0
    var answered = false
    /// The body passed the limit; it is read and dropped, then answered with 413.
    var tooLarge = false
    /// The body did not fit in the request memory; it is read and dropped, then answered with 503.
    var busy = false
    /// Body bytes whose memory is reserved in the ``RequestMemoryBudget`` until the request
    /// completes, and the bytes of memory reserved for them.
    var reservedBodyBytes = 0
    var reservedMemory = 0
    var status = 0
    var bytesOut = 0
    var pending: PendingResponse?
    /// The body of a streamed answer, until the request completes.
    var stream: ResponseStream?

    init(method: String, path: String) {
        self.method = method
        self.path = path
    }
}

private let accessHandler: MHD_AccessHandlerCallback = { cls, connection, url, method, _, uploadData, uploadDataSize, requestContext in
    guard let cls, let connection, let uploadDataSize, let requestContext else { return .NO }
    let lifecycle = Unmanaged<RequestLifecycle>.fromOpaque(cls).takeUnretainedValue()
    let connectionHandle = Connection(pointer: connection, connections: lifecycle.connections)
    guard let existing = requestContext.pointee else {
        let path = HTTPRequest.path(ofTarget: url.map { String(cString: $0) } ?? "/")
        let state = RequestState(method: method.map { String(cString: $0) } ?? "", path: path)
        requestContext.pointee = Unmanaged.passRetained(state).toOpaque()
        lifecycle.begin(state, connection: connectionHandle)
        return .YES
    }
    let state = Unmanaged<RequestState>.fromOpaque(existing).takeUnretainedValue()
    if uploadDataSize.pointee > 0 {
        let count = uploadDataSize.pointee
        uploadDataSize.pointee = 0
        return lifecycle.receive(UnsafeRawBufferPointer(start: uploadData, count: count), for: state) ? .YES : .NO
    }
    lifecycle.finish(state, connection: connectionHandle)
    return .YES
}

private let requestCompleted: MHD_RequestCompletedCallback = { cls, connection, requestContext, _ in
    guard let cls, let requestContext, let existing = requestContext.pointee else { return }
    let lifecycle = Unmanaged<RequestLifecycle>.fromOpaque(cls).takeUnretainedValue()
    if let connection {
        let handle = Connection(pointer: connection, connections: lifecycle.connections)
        handle.stopWatchingForHangUp()
        handle.stopWatchingSendRate()
        handle.setDeadline(seconds: lifecycle.headerTimeout)
    }
    requestContext.pointee = nil
    let state = Unmanaged<RequestState>.fromOpaque(existing).takeRetainedValue()
    lifecycle.complete(state)
}

private let acceptPolicy: MHD_AcceptPolicyCallback = { cls, _, _ in
    guard let cls else { return .NO }
    return Unmanaged<RequestLifecycle>.fromOpaque(cls).takeUnretainedValue().connections.admitsConnection ? .YES : .NO
}

/// Counts and watches connections; a connection's watch is its socket context, retained
/// from its start to its close.
private let connectionNotified: MHD_NotifyConnectionCallback = { cls, connection, socketContext, code in
    guard let cls, let socketContext else { return }
    let connections = Unmanaged<RequestLifecycle>.fromOpaque(cls).takeUnretainedValue().connections
    if code == .CONNECTION_NOTIFY_STARTED {
        guard let connection, let socket = bd_connection_info(connection, .CONNECTION_INFO_CONNECTION_FD)?.pointee.connect_fd else { return }
        socketContext.pointee = Unmanaged.passRetained(connections.started(socket: socket)).toOpaque()
    } else {
        connections.closed(socketContext.pointee.map { Unmanaged<ConnectionWatch>.fromOpaque($0).takeRetainedValue() })
        socketContext.pointee = nil
    }
}

/// Percent-decodes a path or query argument in place (``PercentDecoding``).
private let unescape: bd_unescape_callback = { _, _, text in
    guard let text else { return 0 }
    var bytes = UnsafeMutableBufferPointer(start: UnsafeMutableRawPointer(text).assumingMemoryBound(to: UInt8.self), count: strlen(text))
    let count = PercentDecoding.decode(&bytes)
    text[count] = 0
    return count
}
