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
/// (identities may repeat); adding and removing take constant time. Only the nodes added
/// are indexed: a node never added is not found, and removing it changes nothing.
struct NodesByIdentity {
    private var first: [Fingerprint: Int] = [:]
    /// The next and the previous node of the same identity, by node number (-1: none).
    private var next: [Int] = []
    private var previous: [Int] = []
    private var indexed: [Bool] = []

    mutating func add(_ node: Int, _ identity: Fingerprint) {
        if next.count <= node {
            let missing = node + 1 - next.count
            next.append(contentsOf: repeatElement(-1, count: missing))
            previous.append(contentsOf: repeatElement(-1, count: missing))
            indexed.append(contentsOf: repeatElement(false, count: missing))
        }
        let head = first[identity] ?? -1
        next[node] = head
        previous[node] = -1
        indexed[node] = true
        if head >= 0 { previous[head] = node }
        first[identity] = node
    }

    mutating func remove(_ node: Int, _ identity: Fingerprint) {
        guard node < indexed.count, indexed[node] else { return }
        let (before, after) = (previous[node], next[node])
        if after >= 0 { previous[after] = before }
        if before >= 0 {
            next[before] = after
        } else if first[identity] == node {
            first[identity] = after >= 0 ? after : nil
        }
        (previous[node], next[node], indexed[node]) = (-1, -1, false)
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

/// A set of identities tested first by a bitmap of their low bits: most identities that are
/// not in it are told apart without hashing (a feed's rows, against a patch's few).
struct NamedIdentities {
    private var bits = [UInt64](repeating: 0, count: 1024)
    private let identities: Set<Fingerprint>

    init(_ identities: Set<Fingerprint>) {
        self.identities = identities
        for identity in identities { bits[Int(identity.low >> 6 & 1023)] |= 1 << (identity.low & 63) }
    }

    func contains(_ identity: Fingerprint) -> Bool {
        bits[Int(identity.low >> 6 & 1023)] & 1 << (identity.low & 63) != 0 && identities.contains(identity)
    }
}
