import ArgumentParser
import Foundation

/// Defaults for flags taken from the environment, for containers: `BATCHDIFF_<NAME>`.
enum Environment {
    /// The environment variables that hold whole numbers.
    enum IntegerVariable: String, CaseIterable {
        case port = "BATCHDIFF_PORT"
        case bodyLimit = "BATCHDIFF_BODY_LIMIT"
        case maxConnections = "BATCHDIFF_MAX_CONNECTIONS"
        case connectionTimeout = "BATCHDIFF_CONNECTION_TIMEOUT"
        case headerTimeout = "BATCHDIFF_HEADER_TIMEOUT"
        case bodyTimeout = "BATCHDIFF_BODY_TIMEOUT"
        case minSendRate = "BATCHDIFF_MIN_SEND_RATE"
        case threads = "BATCHDIFF_THREADS"
        case maxVersions = "BATCHDIFF_MAX_VERSIONS"
        case maxFeedMemory = "BATCHDIFF_MAX_FEED_MEMORY"
        case maxWait = "BATCHDIFF_MAX_WAIT"
        case eventHeartbeat = "BATCHDIFF_EVENT_HEARTBEAT"
        case shutdownGrace = "BATCHDIFF_SHUTDOWN_GRACE"
        case requestMemory = "BATCHDIFF_REQUEST_MEMORY"
        case jwtLeeway = "BATCHDIFF_JWT_LEEWAY"
        case maxStreamsPerClient = "BATCHDIFF_MAX_STREAMS_PER_CLIENT"
        case sourceIdle = "BATCHDIFF_SOURCE_IDLE"
    }

    static func string(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    static func string(_ name: String, default value: String) -> String { string(name) ?? value }

    /// The variable's integer, or `value` when it is unset or not an integer. Flag
    /// defaults use this, so `--help` works whatever the environment holds; `validate`
    /// then refuses a variable that is set to something else.
    static func integer(_ variable: IntegerVariable, default value: Int) -> Int {
        string(variable.rawValue).flatMap { Int($0) } ?? value
    }

    /// The variable's truth: `true` or `1`, `false` or `0` (unset: false); a usage error
    /// for anything else.
    static func bool(_ name: String) throws -> Bool {
        switch string(name) {
        case nil, "false", "0": false
        case "true", "1": true
        case let text?: throw ValidationError("\(name)=\(text) is neither true nor false")
        }
    }

    /// Throws a usage error naming the first of `variables` set to something that is not
    /// an integer.
    static func validate(_ variables: [IntegerVariable]) throws {
        for variable in variables {
            if let text = string(variable.rawValue), Int(text) == nil {
                throw ValidationError("\(variable.rawValue)=\(text) is not an integer")
            }
        }
    }
}
