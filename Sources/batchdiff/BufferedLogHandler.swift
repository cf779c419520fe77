import Foundation
import Logging
import Synchronization

/// A swift-log handler for a busy server: lines go to a shared buffer that a background
/// thread writes to standard error every few milliseconds (or at once for warnings and
/// worse), so a request's log line costs no system call of its own. When standard error
/// does not keep up, lines past a bound are dropped and counted, never held without limit.
struct BufferedLogHandler: LogHandler {
    /// The buffer all handlers of the process share, and its writer.
    final class Sink: Sendable {
        private static let bound = 8 << 20
        private let pending = Mutex<(bytes: [UInt8], dropped: Int)>(([], 0))
        private let clock = Mutex<(second: Int, text: String)>((-1, ""))

        init() {
            Thread.detachNewThread { [self] in
                while true {
                    Thread.sleep(forTimeInterval: 0.02)
                    flush()
                }
            }
        }

        func append(_ line: String, urgent: Bool) {
            pending.withLock { pending in
                if pending.bytes.count < Self.bound { pending.bytes.append(contentsOf: line.utf8) } else { pending.dropped += 1 }
            }
            if urgent { flush() }
        }

        /// Writes what is buffered.
        func flush() {
            let (bytes, dropped) = pending.withLock { pending in
                defer { pending = ([], 0) }
                return pending
            }
            // A standard error that fails (its reader gone) loses the lines, never the server.
            if dropped > 0 { try? FileHandle.standardError.write(contentsOf: Data("\(dropped) log lines dropped: standard error did not keep up\n".utf8)) }
            guard !bytes.isEmpty else { return }
            try? FileHandle.standardError.write(contentsOf: Data(bytes))
        }

        /// The current time as ISO 8601 in UTC, formatted once per second.
        func timestamp() -> String {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            let second = now.tv_sec
            return clock.withLock { clock in
                if clock.second != second {
                    var parts = tm()
                    var seconds = second
                    gmtime_r(&seconds, &parts)
                    clock = (second, String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", parts.tm_year + 1900, parts.tm_mon + 1,
                                            parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec))
                }
                return clock.text
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
        let fields = metadata.merging(event.metadata ?? [:]) { $1 }
        let suffix = fields.isEmpty ? "" : " " + fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        Self.sink.append("\(Self.sink.timestamp()) \(event.level) \(label): \(event.message)\(suffix)\n", urgent: event.level >= .warning)
    }
}
