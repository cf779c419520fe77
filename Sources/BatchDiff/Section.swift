/// A section of a sectioned collection: a header that identifies it and the rows it holds.
public struct Section<Header, Item> {
    /// The section's identity and header content (title, footer, ...).
    public var header: Header
    /// The section's rows, in display order.
    public var items: [Item]

    @inlinable
    public init(header: Header, items: [Item]) {
        self.header = header
        self.items = items
    }
}

extension Section: Equatable where Header: Equatable, Item: Equatable {}
extension Section: Sendable where Header: Sendable, Item: Sendable {}
