/// A route's path: literal segments and named parameters, as in `/feeds/{id}/changes`.
/// A pattern that ends in `/?` also matches the path with one trailing slash.
struct PathPattern: Sendable {
    private enum Segment: Sendable {
        case literal(Substring)
        case parameter(name: String)
    }

    private let segments: [Segment]
    private let allowsTrailingSlash: Bool
    /// Whether the pattern has no parameters: then a path matches it compared whole with
    /// ``label`` (a request is matched against every route until one fits, and most routes
    /// are such paths).
    private let isLiteral: Bool
    /// The pattern as written, without `/?`: the route's name in metrics and documents.
    let label: String

    init(_ pattern: String) {
        allowsTrailingSlash = pattern.hasSuffix("/?")
        label = allowsTrailingSlash ? String(pattern.dropLast(2)) : pattern
        segments = label.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { segment in
            segment.hasPrefix("{") && segment.hasSuffix("}") ? .parameter(name: String(segment.dropFirst().dropLast())) : .literal(segment)
        }
        isLiteral = segments.allSatisfy { if case .literal = $0 { true } else { false } }
    }

    /// The values of the parameters if `path` matches, in the pattern's order; nil if not.
    /// A pattern with parameters walks the path in place, segment by segment: matching
    /// allocates nothing but the parameters' values.
    func match(_ path: String) -> PathParameters? {
        if isLiteral {
            // Byte for byte, as the walk below compares (String's == is canonical equivalence).
            let bytes = path.utf8
            let matches = bytes.elementsEqual(label.utf8)
                || (allowsTrailingSlash && bytes.last == UInt8(ascii: "/") && bytes.dropLast().elementsEqual(label.utf8))
            return matches ? PathParameters(values: []) : nil
        }
        var rest = path.utf8[...]
        guard rest.first == UInt8(ascii: "/") else { return nil }
        rest = rest.dropFirst()
        var values: [(name: String, value: Substring.UTF8View)] = []
        for (index, segment) in segments.enumerated() {
            let end = rest.firstIndex(of: UInt8(ascii: "/")) ?? rest.endIndex
            let part = rest[..<end]
            switch segment {
            case .literal(let text): guard part.elementsEqual(text.utf8) else { return nil }
            case .parameter(let name): values.append((name, part))
            }
            rest = rest[end...]
            // Segments are separated by one slash; the last may be followed by one (`/?`).
            if index < segments.count - 1 {
                guard !rest.isEmpty else { return nil }
                rest = rest.dropFirst()
            }
        }
        guard rest.isEmpty || (allowsTrailingSlash && rest.elementsEqual("/".utf8)) else { return nil }
        return PathParameters(values: values.map { ($0.name, String(Substring($0.value))) })
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

    /// The value of the parameter `name`, when the pattern declares it.
    subscript(ifPresent name: String) -> String? { values.first { $0.name == name }?.value }
}
