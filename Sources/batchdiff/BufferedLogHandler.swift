import Foundation
import Logging
import Synchronization

/// A swift-log handler for a busy server: lines go to buffers in memory that a background
/// thread writes to standard error every few milliseconds (or at once for warnings and
/// worse), so a request's log line costs no system call of its own. A line takes the first
/// of several buffers that no other thread holds, so server threads never wait for each
/// other, or for the writer, to log (lines of different threads may come out of order
/// within those milliseconds). When standard error does not keep up, lines past a bound
/// are dropped and counted, never held without limit.
struct BufferedLogHandler: LogHandler {
    /// The buffers all handlers of the process share, and their writer.
    final class Sink: Sendable {
        /// Bytes all buffers together may hold.
        private static let bound = 8 << 20
        private static let shardCount = 8
        private let shards: [Shard] = (0..<shardCount).map { _ in Shard() }
        private let next = Atomic<Int>(0)

        /// One buffer, with the time (ISO 8601, UTC) formatted for its lines once a second.
        private final class Shard: Sendable {
            struct State {
                var bytes: [UInt8] = []
                var dropped = 0
                var second = -1
                var stamp = ""
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
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            let first = next.add(1, ordering: .relaxed).oldValue
            let line = (second: now.tv_sec, level: level, label: label, message: message, suffix: suffix)
            let written = (0..<shards.count).contains { offset in
                shards[(first + offset) % shards.count].state.withLockIfAvailable { Self.write(line, to: &$0) } != nil
            }
            if !written { shards[first % shards.count].state.withLock { Self.write(line, to: &$0) } }
            if level >= .warning { flush() }
        }

        /// Appends `line` to a buffer's bytes (unless the buffer is full: then counts it).
        private static func write(
            _ line: (second: Int, level: Logger.Level, label: String, message: String, suffix: String), to state: inout Shard.State
        ) {
            guard state.bytes.count < bound / shardCount else { return state.dropped += 1 }
            if state.second != line.second { (state.second, state.stamp) = (line.second, timestamp(line.second)) }
            state.bytes.append(contentsOf: state.stamp.utf8)
            state.bytes.append(UInt8(ascii: " "))
            state.bytes.append(contentsOf: line.level.rawValue.utf8)
            state.bytes.append(UInt8(ascii: " "))
            state.bytes.append(contentsOf: line.label.utf8)
            state.bytes.append(contentsOf: ": ".utf8)
            state.bytes.append(contentsOf: line.message.utf8)
            state.bytes.append(contentsOf: line.suffix.utf8)
            state.bytes.append(UInt8(ascii: "\n"))
        }

        /// Writes what is buffered.
        func flush() {
            for shard in shards {
                let (bytes, dropped) = shard.state.withLock { state in
                    defer { (state.bytes, state.dropped) = ([], 0) }
                    return (state.bytes, state.dropped)
                }
                // A standard error that fails (its reader gone) loses the lines, never the server.
                if dropped > 0 { try? FileHandle.standardError.write(contentsOf: Data("\(dropped) log lines dropped: standard error did not keep up\n".utf8)) }
                guard !bytes.isEmpty else { continue }
                try? FileHandle.standardError.write(contentsOf: Data(bytes))
            }
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
