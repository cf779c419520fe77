/// What admitting a request found from its head (``BatchDiffService/admit(_:)``): its path's
/// parameters and the credentials it was let in by, handed to what answers it.
struct Admitted: Sendable {
    let parameters: PathParameters
    let credentials: Credentials

    /// The value of the path parameter `name`, which the route's pattern declares.
    subscript(name: String) -> String { parameters[name] }
}
