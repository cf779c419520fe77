import ArgumentParser
import BatchDiffTokens
import Foundation

/// `--public-feeds [PATTERNS]`: the feeds anyone may read (docs/security.md), comma-separated
/// feed-id patterns as in tokens. The flag alone means `*`, as it did before it took
/// patterns: ArgumentParser has no option whose value may be left out, so ``arguments(_:)``
/// writes it as `--public-feeds=*` before the command line is parsed.
enum PublicFeedsOption {
    static let name = "--public-feeds"
    static let variable = "BATCHDIFF_PUBLIC_FEEDS"

    /// `arguments` with a `--public-feeds` that has no value (the last argument, or one
    /// followed by another option) given `*`.
    static func arguments(_ arguments: [String]) -> [String] {
        arguments.indices.map { index in
            guard arguments[index] == name else { return arguments[index] }
            let next = index + 1
            return next == arguments.endIndex || arguments[next].hasPrefix("-") ? name + "=*" : arguments[index]
        }
    }

    /// The patterns `text` names, or `BATCHDIFF_PUBLIC_FEEDS` when `text` is nil (there,
    /// `true` is every feed, `false` none); a usage error naming the first that is not a
    /// pattern.
    static func patterns(_ text: String?) throws -> [FeedPattern] {
        let (source, origin) = text.map { ($0, name) } ?? (Environment.string(variable).map { value in
            (["true": "*", "1": "*", "false": "", "0": ""][value] ?? value, variable)
        } ?? ("", variable))
        guard !source.isEmpty else { return [] }
        return try source.split(separator: ",", omittingEmptySubsequences: false).map { part in
            let written = part.trimmingCharacters(in: .whitespaces)
            guard let pattern = FeedPattern(written) else {
                throw ValidationError("\(origin): \(written.debugDescription) is not a feed-id pattern (an id of A-Z a-z 0-9 . _ -, or a prefix of them ending in *)")
            }
            return pattern
        }
    }
}
