/// A route's path: literal segments and named parameters, as in `/feeds/{id}/changes`.
/// A pattern that ends in `/?` also matches the path with one trailing slash.
struct PathPattern: Sendable {
    private enum Segment: Sendable {
        case literal(Substring)
        case parameter(name: String)
    }

    private let segments: [Segment]
    private let allowsTrailingSlash: Bool
    /// The pattern as written, without `/?`: the route's name in metrics and documents.
    let label: String

    init(_ pattern: String) {
        allowsTrailingSlash = pattern.hasSuffix("/?")
        label = allowsTrailingSlash ? String(pattern.dropLast(2)) : pattern
        segments = label.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { segment in
            segment.hasPrefix("{") && segment.hasSuffix("}") ? .parameter(name: String(segment.dropFirst().dropLast())) : .literal(segment)
        }
    }

    /// The segments of `path` after its leading slash (nil without one), split once for all
    /// the patterns a request is matched against.
    static func segments(of path: String) -> [Substring]? {
        guard path.first == "/" else { return nil }
        return path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
    }

    /// The values of the parameters if the path of `segments` (``segments(of:)``) matches,
    /// in the pattern's order; nil if not.
    func match(_ path: [Substring]) -> PathParameters? {
        var parts = path[...]
        if allowsTrailingSlash, parts.count == segments.count + 1, parts.last == "" { parts.removeLast() }
        guard parts.count == segments.count else { return nil }
        var values: [(name: String, value: String)] = []
        for (segment, part) in zip(segments, parts) {
            switch segment {
            case .literal(let text): guard part == text else { return nil }
            case .parameter(let name): values.append((name, String(part)))
            }
        }
        return PathParameters(values: values)
    }
}

/// The parameters a path gave its pattern, such as a feed's id.
struct PathParameters: Sendable {
    fileprivate let values: [(name: String, value: String)]

    /// The value of the parameter `name`, which the pattern declares.
    subscript(name: String) -> String {
        guard let value = values.first(where: { $0.name == name })?.value else {
            preconditionFailure("the path pattern has no parameter \(name)")
        }
        return value
    }
}
