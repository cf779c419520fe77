/// Well-formed JSON of the wrong shape: where (a path like `new.sections[2].items`) and why.
public struct CollectionShapeError: Error, Hashable, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "\(path): \(reason)" }
}
