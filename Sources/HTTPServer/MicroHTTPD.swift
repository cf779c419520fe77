import CMicroHTTPD
import CMicroHTTPDShim
import Foundation
import Synchronization

// Every unsafe pointer and C callback of the server lives in this file: libmicrohttpd's
// daemon, connections and per-request state cross into Swift here and nowhere else.

/// A libmicrohttpd connection handle, valid while its request is being served.
struct Connection: @unchecked Sendable {
    let pointer: OpaquePointer

    func suspend() { MHD_suspend_connection(pointer) }

    /// Gives the connection `seconds` from now to send what it must (a body, the next
    /// request's headers) before it is shut down; 0: no deadline.
    func setDeadline(seconds: Int) { bd_connection_deadline(pointer, UInt32(seconds)) }
    func resume() { MHD_resume_connection(pointer) }

    /// The request headers by lowercased name; repeated lines of one header are joined
    /// with ", ", as RFC 9110 section 5.3 reads them.
    func headers() -> [String: String] { values(.HEADER_KIND, isHeader: true) }

    /// The query arguments, percent-decoded, by name as sent, the first of repeats.
    func queryArguments() -> [String: String] { values(.GET_ARGUMENT_KIND, isHeader: false) }

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

    /// Sends `response`; the connection closes afterwards when `close` is set.
    @discardableResult
    func queue(_ response: HTTPResponse, close: Bool) -> MHD_Result {
        let handle = response.body.withUnsafeBytes { body in
            MHD_create_response_from_buffer(body.count, UnsafeMutableRawPointer(mutating: body.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let handle else { return .NO }
        defer { MHD_destroy_response(handle) }
        for header in response.headers { MHD_add_response_header(handle, header.name, header.value) }
        if close { MHD_add_response_header(handle, "Connection", "close") }
        return MHD_queue_response(pointer, UInt32(response.status), handle)
    }
}

/// A running libmicrohttpd daemon.
struct Daemon: @unchecked Sendable {
    let pointer: OpaquePointer
    /// The callbacks' context, retained while the daemon runs.
    let lifecycle: Unmanaged<RequestLifecycle>

    /// Starts a daemon that hands every request to `lifecycle`, which it keeps alive until
    /// ``stop()``.
    static func start(_ configuration: HTTPServerConfiguration, lifecycle: RequestLifecycle) throws -> Daemon {
        try configuration.validate()
        var error = [CChar](repeating: 0, count: 256)
        let context = Unmanaged.passRetained(lifecycle)
        let daemon = configuration.host.withCString { host in
            var config = bd_daemon_config(
                host: host, port: UInt16(configuration.port), threads: UInt32(configuration.threads),
                connection_limit: UInt32(configuration.connectionLimit),
                connection_timeout: UInt32(configuration.connectionTimeout),
                header_timeout: UInt32(configuration.headerTimeout),
                connection_memory_limit: configuration.headerMemoryLimit
            )
            return bd_start_daemon(&config, accessHandler, context.toOpaque(), requestCompleted, context.toOpaque(), &error, error.count)
        }
        guard let daemon else {
            context.release()
            throw HTTPServerError(description: String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return Daemon(pointer: daemon, lifecycle: context)
    }

    var port: Int { Int(bd_daemon_port(pointer)) }

    /// Stops accepting connections; those open are served on.
    func quiesce() { bd_quiesce_daemon(pointer) }

    /// Stops the daemon; call once.
    func stop() {
        bd_stop_daemon(pointer)
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
    let started = ContinuousClock.now
    var headers: [String: String] = [:]
    var query: [String: String] = [:]
    /// The service's decision from the head, kept until the body is in.
    var admission: HTTPAdmission?
    var body: [UInt8] = []
    var bytesIn = 0
    var answered = false
    /// The body passed the limit; it is read and dropped, then answered with 413.
    var tooLarge = false
    var status = 0
    var bytesOut = 0
    var pending: PendingResponse?

    init(method: String, path: String) {
        self.method = method
        self.path = path
    }
}

private let accessHandler: MHD_AccessHandlerCallback = { cls, connection, url, method, _, uploadData, uploadDataSize, requestContext in
    guard let cls, let connection, let uploadDataSize, let requestContext else { return .NO }
    let lifecycle = Unmanaged<RequestLifecycle>.fromOpaque(cls).takeUnretainedValue()
    let connectionHandle = Connection(pointer: connection)
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
        switch lifecycle.receive(count, for: state) {
        case .keep: state.body.append(contentsOf: UnsafeRawBufferPointer(start: uploadData, count: count))
        case .drop: break
        case .close: return .NO
        }
        return .YES
    }
    lifecycle.finish(state, connection: connectionHandle)
    return .YES
}

private let requestCompleted: MHD_RequestCompletedCallback = { cls, connection, requestContext, _ in
    guard let cls, let requestContext, let existing = requestContext.pointee else { return }
    let lifecycle = Unmanaged<RequestLifecycle>.fromOpaque(cls).takeUnretainedValue()
    if let connection { Connection(pointer: connection).setDeadline(seconds: lifecycle.headerTimeout) }
    requestContext.pointee = nil
    let state = Unmanaged<RequestState>.fromOpaque(existing).takeRetainedValue()
    lifecycle.complete(state)
}
