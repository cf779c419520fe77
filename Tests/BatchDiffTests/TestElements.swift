import BatchDiff

/// A row for tests: an identity and a content version.
struct Row: Diffable, Hashable, CustomStringConvertible {
    var id: Int
    var content: Int = 0
    var identity: Int { id }
    var description: String { content == 0 ? "\(id)" : "\(id)'\(content)" }
}

/// A section header for tests: an identity and a title version.
struct Header: Diffable, Hashable {
    var id: Int
    var title: Int = 0
    var identity: Int { id }
}

typealias TestSection = Section<Header, Row>

/// Sections from a compact description: `[(id, [row ids])]`.
func sections(_ description: [(Int, [Int])]) -> [TestSection] {
    description.map { TestSection(header: Header(id: $0.0), items: $0.1.map { Row(id: $0) }) }
}

func paths(_ pairs: [(Int, Int)]) -> [RowPath] { pairs.map { RowPath(section: $0.0, row: $0.1) } }
