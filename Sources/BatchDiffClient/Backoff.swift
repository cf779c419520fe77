import Foundation

/// Delays between tries, in seconds: 0.25 doubling to 4, each with up to a quarter more at random.
struct Backoff: Sendable {
    /// The shortest pause between two tries.
    static let shortest: TimeInterval = 0.25

    private var tries = 0

    mutating func next() -> TimeInterval {
        defer { tries += 1 }
        return Self.shortest * Double(1 << min(tries, 4)) * Double.random(in: 1...1.25)
    }

    mutating func reset() { tries = 0 }
}
