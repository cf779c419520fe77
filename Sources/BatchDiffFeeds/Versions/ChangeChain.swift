/// When a version is kept as its change and when it is kept whole: the one rule every place
/// that keeps versions as changes follows (docs/feeds.md §11).
///
/// A version kept as its change is read by composing the changes from the nearest version
/// kept whole; the chain is cut, the version kept whole, once its changes would add up to
/// more than a share of the text they lead to. So reading a version costs at most
/// `1 + share` texts' worth of bytes, and keeping one costs what changed, plus, now and then,
/// a whole text that the changes before it have paid for. The share differs by who reads
/// the chain and how often:
enum ChangeChain: Sendable {
    /// A feed's latest version a patch made, kept in memory as the version before and its
    /// change until something reads it whole: written whole past one text of changes, so
    /// its first whole reader pays at most about twice what writing it whole would have.
    case latest
    /// Past versions in the memory store, each kept as its change from the version after
    /// it (backward: the latest stays whole): read only by clients far behind, so a chain
    /// may reach two texts before a version is kept whole (compressed).
    case inMemory
    /// Past versions in a file or a database, each kept as its change from the version
    /// before (forward: a version is written once and never rewritten): read from disk by
    /// any server, so a chain is cut at half a text.
    case durable

    /// The share of the text the chain's changes may reach, as a fraction.
    private var share: (numerator: Int, denominator: Int) {
        switch self {
        case .latest: (1, 1)
        case .inMemory: (2, 1)
        case .durable: (1, 2)
        }
    }

    /// Whether a version whose text is `textCount` bytes long is kept as its change when the
    /// chain it ends (its own change included) holds `chainBytes` bytes of changes.
    func keepsChange(chainBytes: Int, textCount: Int) -> Bool {
        chainBytes * share.denominator <= textCount * share.numerator
    }
}
