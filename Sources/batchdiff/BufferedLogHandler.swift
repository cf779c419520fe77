import BatchDiffEndpoints
import Foundation
import Logging
import Synchronization

/// A swift-log handler for a busy server: lines go to buffers in memory that a background
/// thread writes to standard error every few milliseconds (or at once for warnings and
/// worse), so a request's log line costs no system call of its own. A line takes the first
/// of several buffers that no other thread holds, so server threads never wait for each
/// other, or for the writer, to log (lines of different threads may come out of order
/// within those milliseconds); a warning or worse waits until the buffers are written.
/// When standard error does not keep up, lines past a bound are dropped and counted, never
/// held without limit.
///
/// Access lines (``Sink/append(access:label:)``) are buffered as their fields and made
/// text by the writer: a request's thread does not format its own line.
struct BufferedLogHandler: LogHandler {
    /// The buffers all handlers of the process share, and their writer.
    final class Sink: Sendable {
        /// Bytes all buffers together may hold.
        private static let bound = 8 << 20
        /// What an access line is counted as against the bound, besides its path.
        private static let accessLineBytes = 96
        private static let shardCount = 8
        private let shards: [Shard] = (0..<shardCount).map { _ in Shard() }
        /// Held by the flush writing (the writer's, or one at exit): one taking the buffers
        /// while another still writes what it took would return, and the process exit,
        /// before those lines are out. The time of the writer's last line is kept here.
        private let writing = Mutex(Stamp())

        /// One buffer: lines as text, access lines as fields, each at its place among them.
        private final class Shard: Sendable {
            struct State {
                var bytes: [UInt8] = []
                var access: [(offset: Int, second: Int, label: String, line: AccessLine)] = []
                /// What the buffer holds, counted against the bound.
                var size = 0
                var dropped = 0
                /// The time of the buffer's last text line.
                var stamp = Stamp()
            }
            let state = Mutex(State())
        }

        init() {
            Thread.detachNewThread { [self] in
                while true {
                    Thread.sleep(forTimeInterval: 0.02)
                    flush()
                }
            }
        }

        /// Buffers the line `<time> <level> <label>: <message><suffix>`.
        func append(level: Logger.Level, label: String, message: String, suffix: String) {
            let second = Self.currentSecond()
            holdingAShard { state in
                let start = state.bytes.count
                state.stamp.write(second, into: &state.bytes)
                Self.writeHead(level: level, label: label, into: &state.bytes)
                state.bytes.append(contentsOf: message.utf8)
                state.bytes.append(contentsOf: suffix.utf8)
                state.bytes.append(UInt8(ascii: "\n"))
                return state.bytes.count - start
            }
            if level >= .warning { flush() }
        }

        /// Buffers a request's access line, logged at `info` under `label`; the writer makes
        /// it text.
        func append(access line: AccessLine, label: String) {
            let second = Self.currentSecond()
            holdingAShard { state in
                state.access.append((state.bytes.count, second, label, line))
                return Self.accessLineBytes + line.path.utf8.count
            }
        }

        /// Runs `body`, which buffers a line and returns the bytes it counts for, with the
        /// first shard no other thread holds (or, all held, waits for one); a full shard counts
        /// the line dropped instead.
        private func holdingAShard(_ body: (inout Shard.State) -> Int) {
            func buffer(into state: inout Shard.State) {
                guard state.size < Self.bound / Self.shardCount else { return state.dropped += 1 }
                state.size += body(&state)
            }
            // Each thread starts at its own shard (a hash of its id), so threads seldom meet.
            let first = Int(Self.mixed(Self.currentThread) % UInt64(Self.shardCount))
            let written = (0..<shards.count).contains { offset in
                shards[(first + offset) % shards.count].state.withLockIfAvailable { buffer(into: &$0) } != nil
            }
            if !written { shards[first % shards.count].state.withLock { buffer(into: &$0) } }
        }

        /// Writes what is buffered; when it returns, every line buffered before it is out.
        func flush() {
            writing.withLock { flush(stamping: &$0) }
        }

        private func flush(stamping stamp: inout Stamp) {
            for shard in shards {
                let taken = shard.state.withLock { state in
                    let taken = state
                    // Room for as many lines as last time, so a busy shard does not grow from empty again.
                    state.bytes = []
                    state.bytes.reserveCapacity(taken.bytes.count)
                    state.access = []
                    state.access.reserveCapacity(taken.access.count)
                    (state.size, state.dropped) = (0, 0)
                    return taken
                }
                // A standard error that fails (its reader gone) loses the lines, never the server.
                if taken.dropped > 0 {
                    try? FileHandle.standardError.write(contentsOf: Data("\(taken.dropped) log lines dropped: standard error did not keep up\n".utf8))
                }
                guard !taken.access.isEmpty else {
                    if !taken.bytes.isEmpty { try? FileHandle.standardError.write(contentsOf: taken.bytes) }
                    continue
                }
                // The access lines made text, each where it was buffered among the others.
                var text: [UInt8] = []
                text.reserveCapacity(taken.bytes.count + taken.access.count * Self.accessLineBytes)
                var copied = 0
                for entry in taken.access {
                    text.append(contentsOf: taken.bytes[copied..<entry.offset])
                    copied = entry.offset
                    stamp.write(entry.second, into: &text)
                    Self.writeHead(level: .info, label: entry.label, into: &text)
                    entry.line.write(into: &text)
                    text.append(UInt8(ascii: "\n"))
                }
                text.append(contentsOf: taken.bytes[copied...])
                try? FileHandle.standardError.write(contentsOf: text)
            }
        }

        /// The calling thread's id.
        private static var currentThread: UInt64 {
            #if canImport(Darwin)
            UInt64(UInt(bitPattern: pthread_self()))
            #else
            UInt64(pthread_self())
            #endif
        }

        /// `value`'s bits mixed into all of the result's (splitmix64's finalizer): thread ids
        /// lie some pages apart, and differ only in a few middle bits.
        private static func mixed(_ value: UInt64) -> UInt64 {
            var mixed = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
            mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
            return mixed ^ (mixed >> 31)
        }

        private static func writeHead(level: Logger.Level, label: String, into bytes: inout [UInt8]) {
            bytes.append(UInt8(ascii: " "))
            bytes.append(contentsOf: level.rawValue.utf8)
            bytes.append(UInt8(ascii: " "))
            bytes.append(contentsOf: label.utf8)
            bytes.append(contentsOf: ": ".utf8)
        }

        private static func currentSecond() -> Int {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            return now.tv_sec
        }

        /// A line's time, ISO 8601 in UTC, formatted once a second.
        private struct Stamp {
            private var second = -1
            private var text: [UInt8] = []

            mutating func write(_ second: Int, into bytes: inout [UInt8]) {
                if second != self.second { (self.second, text) = (second, Array(Self.timestamp(second).utf8)) }
                bytes.append(contentsOf: text)
            }

            /// The time `second` (since 1970) as ISO 8601 in UTC.
            private static func timestamp(_ second: Int) -> String {
                var parts = tm()
                var seconds = second
                gmtime_r(&seconds, &parts)
                return String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", parts.tm_year + 1900, parts.tm_mon + 1,
                              parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec)
            }
        }
    }

    static let sink = Sink()

    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let fields = event.metadata.map { metadata.merging($0) { $1 } } ?? metadata
        let suffix = fields.isEmpty ? "" : " " + fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        Self.sink.append(level: event.level, label: label, message: event.message.description, suffix: suffix)
    }
}
