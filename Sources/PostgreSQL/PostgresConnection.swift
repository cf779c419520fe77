import CLibPQ
import Glibc

/// One connection to PostgreSQL through libpq, used from one thread (or serial queue) at a
/// time. Every call takes a deadline and waits on the connection's socket with `poll`, never
/// in libpq: libpq's non-blocking API is used throughout, so a server that stopped answering
/// (a frozen process, a dropped network) costs a caller its deadline, not a hang. A
/// connection that timed out or broke is unusable (``isUsable``); open a new one.
///
/// Every unsafe pointer of libpq lives in this file.
public final class PostgresConnection {
    private let handle: OpaquePointer
    private var broken = false

    private init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        PQfinish(handle)
    }

    /// Connects to the libpq connection URI or keyword string `conninfo` before `deadline`,
    /// with `settings` (keyword and value, as `("replication", "database")`) taking the place
    /// of any the string gives. (Resolving a host name may block; give addresses where that
    /// matters.)
    public static func connect(
        _ conninfo: String, settings: [(keyword: String, value: String)] = [], deadline: ContinuousClock.Instant
    ) throws(PostgresError) -> PostgresConnection {
        // libpq expands the string given as the first `dbname` (expand_dbname = 1); a keyword
        // given later in the arrays wins over the string's.
        let keywords = (["dbname"] + settings.map(\.keyword)).map { UnsafePointer(strdup($0)) }
        let values = ([conninfo] + settings.map(\.value)).map { UnsafePointer(strdup($0)) }
        defer { (keywords + values).forEach { free(UnsafeMutablePointer(mutating: $0)) } }
        let started = PQconnectStartParams(keywords + [nil], values + [nil], 1)
        guard let handle = started else { throw .connection("out of memory") }
        // Owned from here: the connection's deinit calls PQfinish, also when connecting fails.
        let connection = PostgresConnection(handle: handle)
        guard PQstatus(handle) != CONNECTION_BAD else { throw .connection(connection.errorMessage) }
        var state = PGRES_POLLING_WRITING
        while state != PGRES_POLLING_OK {
            switch state {
            case PGRES_POLLING_READING: try connection.wait(for: Int16(POLLIN), until: deadline, doing: "connecting")
            case PGRES_POLLING_WRITING: try connection.wait(for: Int16(POLLOUT), until: deadline, doing: "connecting")
            case PGRES_POLLING_FAILED: throw .connection(connection.errorMessage)
            default: break
            }
            state = PQconnectPoll(handle)
        }
        guard PQsetnonblocking(handle, 1) == 0 else { throw .connection(connection.errorMessage) }
        return connection
    }

    /// Whether the connection can take another statement: it neither broke nor timed out.
    public var isUsable: Bool { !broken && PQstatus(handle) == CONNECTION_OK }

    /// Runs `sql` with `parameters` (`$1`, `$2`, ...) and returns its rows, all before
    /// `deadline`. `sql` may hold one statement only; it runs in its own transaction unless
    /// one is open.
    @discardableResult
    public func query(
        _ sql: String, _ parameters: [PostgresValue] = [], format: PostgresRows.Format = .binary, deadline: ContinuousClock.Instant
    ) throws(PostgresError) -> PostgresRows {
        guard isUsable else { throw .connection("the connection is closed") }
        do throws(PostgresError) {
            try send(sql, parameters, format: format)
            try flush(until: deadline)
            return try results(until: deadline)
        } catch where error.kind != .statement {
            broken = true
            throw error
        }
    }

    /// Waits until `deadline` for notifications of the channels this connection listens on
    /// (after `LISTEN`), returning those that came (none when the deadline passed first).
    public func notifications(until deadline: ContinuousClock.Instant) throws(PostgresError) -> [PostgresNotification] {
        guard isUsable else { throw .connection("the connection is closed") }
        var received = takeNotifications()
        guard received.isEmpty else { return received }
        do throws(PostgresError) {
            try wait(for: Int16(POLLIN), until: deadline, doing: "listening")
        } catch where error.kind == .timeout {
            return []
        } catch {
            broken = true
            throw error
        }
        try consumeInput()
        received = takeNotifications()
        return received
    }

    private func send(_ sql: String, _ parameters: [PostgresValue], format: PostgresRows.Format) throws(PostgresError) {
        // All parameters in one buffer. Integers go as text, ending in NUL (libpq reads
        // text parameters as C strings); strings and bytes go binary, counted, so a string
        // holding NUL is refused by the server rather than cut short.
        var buffer: [UInt8] = []
        var offsets: [Int] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        for parameter in parameters {
            offsets.append(buffer.count)
            switch parameter {
            case .text(let text):
                buffer.append(contentsOf: text.utf8)
                lengths.append(Int32(text.utf8.count))
                formats.append(1)
            case .integer(let integer):
                buffer.append(contentsOf: String(integer).utf8)
                buffer.append(0)
                lengths.append(0)
                formats.append(0)
            case .bytes(let bytes):
                buffer.append(contentsOf: bytes)
                lengths.append(Int32(bytes.count))
                formats.append(1)
            }
        }
        let sent = buffer.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { characters in
                let values: [UnsafePointer<CChar>?] = offsets.map { characters.baseAddress.map(UnsafePointer.init)?.advanced(by: $0) }
                return PQsendQueryParams(handle, sql, Int32(parameters.count), nil, values, lengths, formats, format == .binary ? 1 : 0)
            }
        }
        guard sent == 1 else { throw .connection(errorMessage) }
    }

    /// Sends what libpq buffered (non-blocking mode), reading meanwhile as libpq asks.
    private func flush(until deadline: ContinuousClock.Instant) throws(PostgresError) {
        while true {
            switch PQflush(handle) {
            case 0: return
            case 1:
                let ready = try wait(for: Int16(POLLIN | POLLOUT), until: deadline, doing: "sending")
                if ready & Int16(POLLIN | POLLERR | POLLHUP) != 0 { try consumeInput() }
            default: throw .connection(errorMessage)
            }
        }
    }

    /// Reads every result of the statement sent, to the end (libpq needs that before the
    /// next one); its rows, or its error.
    private func results(until deadline: ContinuousClock.Instant) throws(PostgresError) -> PostgresRows {
        var rows: [[[UInt8]?]] = []
        var types: [UInt32] = []
        var failure: PostgresError?
        while true {
            while PQisBusy(handle) == 1 {
                try wait(for: Int16(POLLIN), until: deadline, doing: "waiting for the answer")
                try consumeInput()
            }
            guard let result = PQgetResult(handle) else { break }
            defer { PQclear(result) }
            switch PQresultStatus(result) {
            case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
                rows += Self.copyRows(of: result)
                if PQnfields(result) > 0 { types = (0..<PQnfields(result)).map { UInt32(PQftype(result, $0)) } }
            case PGRES_COPY_BOTH:
                // A replication stream began (``startReplication(_:deadline:)``): no rows.
                return PostgresRows(rows: [], types: [])
            case PGRES_FATAL_ERROR where PQstatus(handle) == CONNECTION_OK:
                let sqlstate = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
                failure = failure ?? PostgresError(kind: .statement, sqlstate: sqlstate, message: Self.message(of: result))
            default:
                failure = failure ?? .connection(Self.message(of: result))
            }
        }
        if let failure { throw failure }
        return PostgresRows(rows: rows, types: types)
    }

    private static func copyRows(of result: OpaquePointer) -> [[[UInt8]?]] {
        (0..<PQntuples(result)).map { row in
            (0..<PQnfields(result)).map { column -> [UInt8]? in
                guard PQgetisnull(result, row, column) == 0 else { return nil }
                let count = Int(PQgetlength(result, row, column))
                return PQgetvalue(result, row, column).withMemoryRebound(to: UInt8.self, capacity: count) {
                    Array(UnsafeBufferPointer(start: $0, count: count))
                }
            }
        }
    }

    private func consumeInput() throws(PostgresError) {
        guard PQconsumeInput(handle) == 1 else {
            broken = true
            throw .connection(errorMessage)
        }
    }

    private func takeNotifications() -> [PostgresNotification] {
        var received: [PostgresNotification] = []
        while let notification = PQnotifies(handle) {
            received.append(PostgresNotification(
                channel: String(cString: notification.pointee.relname), payload: String(cString: notification.pointee.extra)
            ))
            PQfreemem(notification)
        }
        return received
    }

    /// Waits until the socket is ready for `events` or `deadline` passes (a timeout error
    /// saying what was being done); returns the events that are ready.
    @discardableResult
    private func wait(for events: Int16, until deadline: ContinuousClock.Instant, doing what: String) throws(PostgresError) -> Int16 {
        guard let ready = try wait(for: events, until: deadline, orReadable: nil) else { throw .timeout(what) }
        return ready
    }

    /// Waits until the socket is ready for `events`, `other` (a descriptor) is readable, or
    /// `deadline` passes; returns the socket's ready events (0 when `other` woke it), or
    /// `nil` when the deadline passed.
    private func wait(for events: Int16, until deadline: ContinuousClock.Instant, orReadable other: Int32?) throws(PostgresError) -> Int16? {
        let socket = PQsocket(handle)
        guard socket >= 0 else { throw .connection("no socket: \(errorMessage)") }
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { return nil }
            let milliseconds = remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1
            var descriptors = [pollfd(fd: socket, events: events, revents: 0), pollfd(fd: other ?? -1, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&descriptors, 2, Int32(clamping: milliseconds))
            if ready > 0 {
                guard descriptors[0].revents & Int16(POLLNVAL) == 0 else { throw .connection("the socket closed") }
                return descriptors[0].revents  // an error or a hang-up is for libpq to read and report
            }
            if ready < 0 && errno != EINTR { throw .connection("poll failed: errno \(errno)") }
        }
    }

    private var errorMessage: String {
        Self.trimmed(PQerrorMessage(handle).map { String(cString: $0) } ?? "unknown error")
    }

    private static func message(of result: OpaquePointer) -> String {
        trimmed(PQresultErrorMessage(result).map { String(cString: $0) } ?? "unknown error")
    }

    private static func trimmed(_ message: String) -> String {
        String(message.reversed().drop { $0 == "\n" || $0 == " " }.reversed())
    }
}

extension PostgresConnection {
    /// Sends `sql` by the simple query protocol (the only one a replication connection,
    /// `replication=database`, takes for its commands) and returns its rows, all in text
    /// form, before `deadline`. `START_REPLICATION` switches the connection to its
    /// copy-both stream (``replicationData(until:orReadable:)``) and returns no rows.
    @discardableResult
    public func simpleQuery(_ sql: String, deadline: ContinuousClock.Instant) throws(PostgresError) -> PostgresRows {
        guard isUsable else { throw .connection("the connection is closed") }
        do throws(PostgresError) {
            guard PQsendQuery(handle, sql) == 1 else { throw .connection(errorMessage) }
            try flush(until: deadline)
            return try results(until: deadline)
        } catch where error.kind != .statement {
            broken = true
            throw error
        }
    }

    /// The next message of the copy-both stream, waiting until `deadline` or until
    /// `wakeDescriptor` is readable: `nil` then. The stream's end is a connection error.
    public func replicationData(until deadline: ContinuousClock.Instant, orReadable wakeDescriptor: Int32?) throws(PostgresError) -> [UInt8]? {
        guard isUsable else { throw .connection("the connection is closed") }
        while true {
            var buffer: UnsafeMutablePointer<CChar>?
            let count = PQgetCopyData(handle, &buffer, 1)
            if count > 0, let buffer {
                defer { PQfreemem(buffer) }
                return buffer.withMemoryRebound(to: UInt8.self, capacity: Int(count)) { Array(UnsafeBufferPointer(start: $0, count: Int(count))) }
            }
            guard count == 0 else {
                broken = true
                // -1: the server ended the stream; its result says why.
                while let result = PQgetResult(handle) {
                    defer { PQclear(result) }
                    if PQresultStatus(result) == PGRES_FATAL_ERROR { throw .connection(Self.message(of: result)) }
                }
                throw .connection(count == -1 ? "the replication stream ended" : errorMessage)
            }
            do throws(PostgresError) {
                guard let ready = try wait(for: Int16(POLLIN), until: deadline, orReadable: wakeDescriptor), ready != 0 else { return nil }
            } catch {
                broken = true
                throw error
            }
            try consumeInput()
        }
    }

    /// Sends `bytes` as one message of the copy-both stream, before `deadline`.
    public func sendReplicationData(_ bytes: [UInt8], deadline: ContinuousClock.Instant) throws(PostgresError) {
        guard isUsable else { throw .connection("the connection is closed") }
        let sent = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { PQputCopyData(handle, $0.baseAddress, Int32($0.count)) }
        }
        do throws(PostgresError) {
            guard sent == 1 else { throw .connection(errorMessage) }
            try flush(until: deadline)
        } catch {
            broken = true
            throw error
        }
    }

    /// `text` quoted as an SQL identifier (`PQescapeIdentifier`).
    public func quotedIdentifier(_ text: String) -> String {
        guard let quoted = PQescapeIdentifier(handle, text, text.utf8.count) else { return "\"\"" }
        defer { PQfreemem(quoted) }
        return String(cString: quoted)
    }

    /// `text` quoted as an SQL string literal (`PQescapeLiteral`).
    public func quotedLiteral(_ text: String) -> String {
        guard let quoted = PQescapeLiteral(handle, text, text.utf8.count) else { return "''" }
        defer { PQfreemem(quoted) }
        return String(cString: quoted)
    }
}

extension PostgresConnection {
    /// Checks that `conninfo` is a connection URI or keyword string libpq can read (without
    /// connecting); throws libpq's reason when it is not.
    public static func checkConninfo(_ conninfo: String) throws(PostgresError) {
        var message: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(conninfo, &message) else {
            defer { PQfreemem(message) }
            throw .connection(trimmed(message.map { String(cString: $0) } ?? "out of memory"))
        }
        PQconninfoFree(options)
    }
}
