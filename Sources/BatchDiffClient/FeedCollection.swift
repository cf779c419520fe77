import BatchDiff

/// A collection as a client holds it (docs/batch-format.md §1.1): a list of items, or
/// sections, each a header and its items.
///
/// `Item` and `Header` are the app's own types, decoded from the server's JSON; a section's
/// header is decoded from the section object (its `items` member aside). ``JSON``
/// stands in where an app has no type.
public enum FeedCollection<Header, Item> {
    /// A JSON array of items.
    case list([Item])
    /// `{"sections": [...]}`.
    case sectioned([Section<Header, Item>])

    /// Items per section: one entry for a list (what a batch's `counts` says).
    public var counts: [Int] {
        switch self {
        case .list(let items): [items.count]
        case .sectioned(let sections): sections.map(\.items.count)
        }
    }
}

extension FeedCollection: Sendable where Header: Sendable, Item: Sendable {}
extension FeedCollection: Equatable where Header: Equatable, Item: Equatable {}

extension FeedCollection: Decodable where Header: Decodable, Item: Decodable {
    public init(from decoder: any Decoder) throws {
        if (try? decoder.unkeyedContainer()) != nil {
            self = .list(try decoder.singleValueContainer().decode([Item].self))
            return
        }
        let object = try decoder.container(keyedBy: MemberName.self)
        let sections = try object.decode([DecodedSection<Header, Item>].self, forKey: MemberName("sections"))
        self = .sectioned(sections.map(\.section))
    }
}

extension FeedCollection: Encodable where Header: Encodable, Item: Encodable {
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .list(let items):
            var value = encoder.singleValueContainer()
            try value.encode(items)
        case .sectioned(let sections):
            var object = encoder.container(keyedBy: MemberName.self)
            try object.encode(sections.map { DecodedSection($0) }, forKey: MemberName("sections"))
        }
    }
}

/// A section object in JSON: its header's members and `items`.
struct DecodedSection<Header, Item> {
    var section: Section<Header, Item>

    init(_ section: Section<Header, Item>) {
        self.section = section
    }
}

extension DecodedSection: Decodable where Header: Decodable, Item: Decodable {
    init(from decoder: any Decoder) throws {
        let items = try decoder.container(keyedBy: MemberName.self).decode([Item].self, forKey: MemberName("items"))
        section = Section(header: try SectionHeader<Header>(from: decoder).header, items: items)
    }
}

extension DecodedSection: Encodable where Header: Encodable, Item: Encodable {
    func encode(to encoder: any Encoder) throws {
        try SectionHeader(header: section.header).encode(to: encoder)
        var object = encoder.container(keyedBy: MemberName.self)
        try object.encode(section.items, forKey: MemberName("items"))
    }
}

/// A section header in JSON: the section object without `items`. A ``JSON`` header
/// leaves `items` out; an app's own type simply has no such property.
struct SectionHeader<Header> {
    var header: Header
}

extension SectionHeader: Decodable where Header: Decodable {
    init(from decoder: any Decoder) throws {
        header = try Header(from: decoder)
        if case .object(var members)? = header as? JSON {
            members["items"] = nil
            header = JSON.object(members) as! Header
        }
    }
}

extension SectionHeader: Encodable where Header: Encodable {
    func encode(to encoder: any Encoder) throws {
        try header.encode(to: encoder)
    }
}
