import Foundation

/// Defaults for flags taken from the environment, for containers: `BATCHDIFF_<NAME>`.
enum Environment {
    static func string(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    static func string(_ name: String, default value: String) -> String { string(name) ?? value }

    /// An integer from the environment; a value that is not one stops the program.
    static func integer(_ name: String, default value: Int) -> Int {
        guard let text = string(name) else { return value }
        guard let number = Int(text) else {
            try? FileHandle.standardError.write(contentsOf: Data("batchdiff: \(name)=\(text) is not an integer\n".utf8))
            exit(64)
        }
        return number
    }
}
