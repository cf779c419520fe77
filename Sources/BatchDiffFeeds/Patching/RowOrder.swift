import BatchDiffJSON

/// A list feed's rows in order, counted: an implicit treap (a binary tree kept balanced by
/// random priorities, ordered by position) whose nodes know their subtree's rows and text
/// bytes, and their parent. A row's position, the bytes before a position, putting a row at
/// a position and taking one out each take O(log n) time; rows are found by identity in a
/// table beside the tree. Each row's text stays where it was read (``RowTexts``), so nothing
/// is copied.
struct RowOrder {
    /// Where a row's text stands: in which of the ``RowTexts``, and where in it.
    struct TextLocation {
        var text: Int32
        var start: Int32
        var count: Int32
    }

    private struct Node {
        var identity: Fingerprint
        var content: Fingerprint
        var location: TextLocation
        var left: Int32 = -1
        var right: Int32 = -1
        var parent: Int32 = -1
        var priority: UInt32
        /// Rows, and bytes of their texts, in the subtree.
        var size: Int32 = 1
        var bytes = 0
    }

    /// What the identity table holds for an identity that more than one row has.
    private static let repeated: Int32 = -2

    private var nodes: [Node] = []
    private var root: Int32 = -1
    private var freed: [Int32] = []
    private var byIdentity: [Fingerprint: Int32] = [:]
    private var random = PriorityGenerator()

    /// The rows `items`, whose texts stand in the first of the ``RowTexts``.
    init(items: some Collection<JSONItem>) {
        nodes.reserveCapacity(items.count)
        byIdentity.reserveCapacity(items.count)
        for item in items {
            let node = Int32(nodes.count)
            let span = item.span
            nodes.append(Node(
                identity: item.identity, content: item.content,
                location: TextLocation(text: 0, start: Int32(span.lowerBound), count: Int32(span.count)), priority: 0
            ))
            byIdentity[item.identity] = byIdentity[item.identity] == nil ? node : Self.repeated
        }
        root = balanced(0..<Int32(nodes.count), depth: 0)
    }

    /// A perfectly balanced tree of the nodes `range`, its priorities falling with depth (a
    /// treap's order, so random ones fit in later); its root.
    private mutating func balanced(_ range: Range<Int32>, depth: Int) -> Int32 {
        guard !range.isEmpty else { return -1 }
        let middle = range.lowerBound + Int32(range.count / 2)
        nodes[Int(middle)].priority = UInt32.max >> min(depth, 31)
        let left = balanced(range.lowerBound..<middle, depth: depth + 1)
        let right = balanced(middle + 1..<range.upperBound, depth: depth + 1)
        link(middle, left: left, right: right)
        return middle
    }

    // MARK: Reading

    /// The number of rows.
    var count: Int { size(root) }

    /// The length of the list's compact text: `[`, the rows with a comma between each two, `]`.
    var textCount: Int { 2 + bytes(root) + max(0, count - 1) }

    /// The row of `identity`: `nil` when there is none, ``Lookup/repeated`` when several rows have it.
    func row(_ identity: Fingerprint) -> Lookup {
        guard let node = byIdentity[identity] else { return .none }
        return node == Self.repeated ? .repeated : .row(node)
    }

    enum Lookup: Equatable {
        case none
        case repeated
        case row(Int32)
    }

    /// A row where it stands: its position, content and text.
    struct PlacedRow {
        let position: Int
        let content: Fingerprint
        let location: TextLocation

        /// The length of its text.
        var length: Int { Int(location.count) }
    }

    /// The row where it stands now.
    func placed(_ row: Int32) -> PlacedRow {
        PlacedRow(position: position(of: row), content: nodes[Int(row)].content, location: nodes[Int(row)].location)
    }

    /// Where the row's text is.
    func location(of row: Int32) -> TextLocation { nodes[Int(row)].location }

    /// The row's identity.
    func identity(of row: Int32) -> Fingerprint { nodes[Int(row)].identity }

    /// Every row, in order (time proportional to their number).
    func rowsInOrder() -> [Int32] {
        var rows: [Int32] = []
        rows.reserveCapacity(count)
        var stack: [Int32] = []
        var node = root
        while node >= 0 || !stack.isEmpty {
            while node >= 0 {
                stack.append(node)
                node = nodes[Int(node)].left
            }
            node = stack.removeLast()
            rows.append(node)
            node = nodes[Int(node)].right
        }
        return rows
    }

    /// The rows at `positions` (within `0..<count`), in order: the first found from the
    /// root, each next one as the one before's successor (O(log n), then O(1) each on average).
    func rows(at positions: Range<Int>) -> [Int32] {
        guard !positions.isEmpty else { return [] }
        var rows: [Int32] = []
        rows.reserveCapacity(positions.count)
        var node = root
        var rest = positions.lowerBound
        while true {
            let left = nodes[Int(node)].left
            if rest < size(left) {
                node = left
            } else if rest == size(left) {
                break
            } else {
                rest -= size(left) + 1
                node = nodes[Int(node)].right
            }
        }
        rows.append(node)
        while rows.count < positions.count {
            node = successor(of: node)
            rows.append(node)
        }
        return rows
    }

    /// The row after `row` (which must have one).
    private func successor(of row: Int32) -> Int32 {
        var node = row
        if nodes[Int(node)].right >= 0 {
            node = nodes[Int(node)].right
            while nodes[Int(node)].left >= 0 { node = nodes[Int(node)].left }
            return node
        }
        while nodes[Int(nodes[Int(node)].parent)].right == node { node = nodes[Int(node)].parent }
        return nodes[Int(node)].parent
    }

    /// The row's position.
    func position(of row: Int32) -> Int {
        var position = size(nodes[Int(row)].left)
        var node = row
        while nodes[Int(node)].parent >= 0 {
            let parent = nodes[Int(node)].parent
            if nodes[Int(parent)].right == node { position += size(nodes[Int(parent)].left) + 1 }
            node = parent
        }
        return position
    }

    /// The bytes of the texts of the rows before `position`.
    func bytes(before position: Int) -> Int {
        var node = root
        var rest = position
        var sum = 0
        while node >= 0 {
            let left = nodes[Int(node)].left
            if rest <= size(left) {
                node = left
            } else {
                sum += bytes(left) + Int(nodes[Int(node)].location.count)
                rest -= size(left) + 1
                node = nodes[Int(node)].right
            }
        }
        return sum
    }

    /// Where the text of the row at `position` starts in the list's compact text.
    func offset(of position: Int) -> Int { 1 + position + bytes(before: position) }

    /// The number of rows before the first for which `isAfter` holds, the rows standing so
    /// that once it holds for one it holds for every one after (a sorted order's upper
    /// bound): O(log n) calls, down the tree.
    func partitionPoint<Failure: Error>(_ isAfter: (Int32) throws(Failure) -> Bool) throws(Failure) -> Int {
        var node = root
        var position = 0
        while node >= 0 {
            if try isAfter(node) {
                node = nodes[Int(node)].left
            } else {
                position += size(nodes[Int(node)].left) + 1
                node = nodes[Int(node)].right
            }
        }
        return position
    }

    // MARK: Changing

    /// A new row of `identity` and `content`, its text at `location`, in no position yet
    /// (``insert(_:at:)`` puts it in one).
    mutating func newRow(identity: Fingerprint, content: Fingerprint, location: TextLocation) -> Int32 {
        let node = Node(identity: identity, content: content, location: location, priority: random.next())
        let row: Int32
        if let reused = freed.popLast() {
            row = reused
            nodes[Int(row)] = node
        } else {
            row = Int32(nodes.count)
            nodes.append(node)
        }
        update(row)
        byIdentity[identity] = byIdentity[identity] == nil ? row : Self.repeated
        return row
    }

    /// Gives the row new content, its text at `location` (where it stands).
    mutating func change(_ row: Int32, content: Fingerprint, location: TextLocation) {
        nodes[Int(row)].content = content
        nodes[Int(row)].location = location
        var node = row
        while node >= 0 {
            update(node)
            node = nodes[Int(node)].parent
        }
    }

    /// Puts `row`, in no position, at `position` (0 through ``count``).
    mutating func insert(_ row: Int32, at position: Int) {
        let (before, after) = split(root, position)
        root = merge(merge(before, row), after)
        nodes[Int(root)].parent = -1
    }

    /// Takes `row` out of its position (it can be put back with ``insert(_:at:)``).
    mutating func detach(_ row: Int32) {
        let (before, rest) = split(root, position(of: row))
        let (_, after) = split(rest, 1)
        root = merge(before, after)
        if root >= 0 { nodes[Int(root)].parent = -1 }
        link(row, left: -1, right: -1)
        nodes[Int(row)].parent = -1
    }

    /// Takes `row` out for good: its identity is no longer found.
    mutating func remove(_ row: Int32) {
        detach(row)
        byIdentity[nodes[Int(row)].identity] = nil
        freed.append(row)
    }

    // MARK: The tree

    private func size(_ node: Int32) -> Int { node < 0 ? 0 : Int(nodes[Int(node)].size) }

    private func bytes(_ node: Int32) -> Int { node < 0 ? 0 : nodes[Int(node)].bytes }

    private mutating func update(_ node: Int32) {
        let (left, right) = (nodes[Int(node)].left, nodes[Int(node)].right)
        nodes[Int(node)].size = Int32(1 + size(left) + size(right))
        nodes[Int(node)].bytes = Int(nodes[Int(node)].location.count) + bytes(left) + bytes(right)
    }

    private mutating func link(_ node: Int32, left: Int32, right: Int32) {
        nodes[Int(node)].left = left
        nodes[Int(node)].right = right
        if left >= 0 { nodes[Int(left)].parent = node }
        if right >= 0 { nodes[Int(right)].parent = node }
        update(node)
    }

    /// The tree `node` split into its first `count` rows and the rest.
    private mutating func split(_ node: Int32, _ count: Int) -> (Int32, Int32) {
        guard node >= 0 else { return (-1, -1) }
        let (left, right) = (nodes[Int(node)].left, nodes[Int(node)].right)
        if count <= size(left) {
            let (first, rest) = split(left, count)
            link(node, left: rest, right: right)
            if first >= 0 { nodes[Int(first)].parent = -1 }
            return (first, node)
        }
        let (first, rest) = split(right, count - size(left) - 1)
        link(node, left: left, right: first)
        if rest >= 0 { nodes[Int(rest)].parent = -1 }
        return (node, rest)
    }

    /// The trees `first` and `second` as one, `first`'s rows before `second`'s.
    private mutating func merge(_ first: Int32, _ second: Int32) -> Int32 {
        guard first >= 0 else { return second }
        guard second >= 0 else { return first }
        if nodes[Int(first)].priority >= nodes[Int(second)].priority {
            let right = merge(nodes[Int(first)].right, second)
            link(first, left: nodes[Int(first)].left, right: right)
            return first
        }
        let left = merge(first, nodes[Int(second)].left)
        link(second, left: left, right: nodes[Int(second)].right)
        return second
    }

    /// Checks every invariant of the tree and the identity table (a precondition fails on
    /// the first broken one), in O(n): for tests, after each change (as swift-collections'
    /// rope has `_checkInvariants()`).
    func _checkInvariants() {
        var seen = Set<Int32>()
        var identities: [Fingerprint: Int] = [:]
        func check(_ node: Int32, parent: Int32) {
            guard node >= 0 else { return }
            precondition(seen.insert(node).inserted, "node \(node) is reached twice")
            let row = nodes[Int(node)]
            precondition(row.parent == parent, "node \(node)'s parent is \(row.parent), not \(parent)")
            for child in [row.left, row.right] where child >= 0 {
                precondition(nodes[Int(child)].priority <= row.priority, "node \(child) outranks its parent \(node)")
            }
            check(row.left, parent: node)
            check(row.right, parent: node)
            precondition(Int(row.size) == 1 + size(row.left) + size(row.right), "node \(node) counts \(row.size) rows")
            precondition(row.bytes == Int(row.location.count) + bytes(row.left) + bytes(row.right), "node \(node) counts \(row.bytes) bytes")
            identities[row.identity, default: 0] += 1
        }
        check(root, parent: -1)
        precondition(seen.count + freed.count == nodes.count, "\(nodes.count) nodes: \(seen.count) in the tree, \(freed.count) freed")
        precondition(freed.allSatisfy { !seen.contains($0) }, "a freed node is in the tree")
        precondition(identities.count == byIdentity.count, "\(byIdentity.count) identities in the table, \(identities.count) in the tree")
        for (identity, rows) in identities {
            let expected = rows == 1 ? byIdentity[identity].map { $0 >= 0 && seen.contains($0) } : byIdentity[identity] == Self.repeated
            precondition(expected == true, "the table's entry for an identity of \(rows) rows")
        }
    }

    /// Bytes a row takes, about: its node, and its entry in the identity table.
    static let bytesPerRow = MemoryLayout<Node>.stride + 2 * (MemoryLayout<Fingerprint>.stride + 8)

    /// Bytes held, estimated.
    var byteEstimate: Int {
        nodes.capacity * MemoryLayout<Node>.stride + byIdentity.capacity * (MemoryLayout<Fingerprint>.stride + 8)
    }
}
