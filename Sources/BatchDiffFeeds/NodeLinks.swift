import BatchDiffJSON

/// Nodes numbered from 0 in doubly linked lists (``Chain``s whose ends the caller keeps):
/// a node is put before another, or taken out, in constant time.
struct NodeLinks {
    /// The two ends of one list of nodes; -1 while it is empty.
    struct Chain {
        var first = -1
        var last = -1
    }

    private var previous: [Int] = []
    private var next: [Int] = []

    /// A new node, in no list yet; its number.
    mutating func add() -> Int {
        previous.append(-1)
        next.append(-1)
        return next.count - 1
    }

    /// Puts `node` into `chain` before `successor` (a node of the chain), or at its end.
    mutating func insert(_ node: Int, into chain: inout Chain, before successor: Int?) {
        let after = successor.map { previous[$0] } ?? chain.last
        previous[node] = after
        next[node] = successor ?? -1
        if after >= 0 { next[after] = node } else { chain.first = node }
        if let successor { previous[successor] = node } else { chain.last = node }
    }

    /// Takes `node` out of `chain`.
    mutating func remove(_ node: Int, from chain: inout Chain) {
        let (before, after) = (previous[node], next[node])
        if before >= 0 { next[before] = after } else { chain.first = after }
        if after >= 0 { previous[after] = before } else { chain.last = before }
        previous[node] = -1
        next[node] = -1
    }

    /// The node after `node` in its chain, if any.
    func successor(of node: Int) -> Int? { next[node] >= 0 ? next[node] : nil }

    /// The nodes of `chain`, in order.
    func nodes(of chain: Chain) -> [Int] {
        var nodes: [Int] = []
        var node = chain.first
        while node >= 0 {
            nodes.append(node)
            node = next[node]
        }
        return nodes
    }
}

/// Numbered nodes by identity: every node added with an identity, until it is removed
/// (identities may repeat); adding and removing take constant time.
struct NodesByIdentity {
    private var first: [Fingerprint: Int] = [:]
    /// The next and the previous node of the same identity, by node number (-1: none).
    private var next: [Int] = []
    private var previous: [Int] = []

    init(capacity: Int) { first.reserveCapacity(capacity) }

    mutating func add(_ node: Int, _ identity: Fingerprint) {
        if next.count <= node {
            next.append(contentsOf: repeatElement(-1, count: node + 1 - next.count))
            previous.append(contentsOf: repeatElement(-1, count: node + 1 - previous.count))
        }
        let head = first[identity] ?? -1
        next[node] = head
        previous[node] = -1
        if head >= 0 { previous[head] = node }
        first[identity] = node
    }

    mutating func remove(_ node: Int, _ identity: Fingerprint) {
        let (before, after) = (previous[node], next[node])
        if after >= 0 { previous[after] = before }
        if before >= 0 {
            next[before] = after
        } else if first[identity] == node {
            first[identity] = after >= 0 ? after : nil
        }
        (previous[node], next[node]) = (-1, -1)
    }

    /// Up to `limit` nodes of `identity`, newest first.
    func nodes(_ identity: Fingerprint, upTo limit: Int) -> [Int] {
        var nodes: [Int] = []
        var node = first[identity] ?? -1
        while node >= 0 && nodes.count < limit {
            nodes.append(node)
            node = next[node]
        }
        return nodes
    }
}
