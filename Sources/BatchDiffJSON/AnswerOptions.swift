import BatchDiff

/// What a client asks of a batch answer beyond the batch (docs/batch-format.md §7):
/// `changedMembers` and `maxChanges`, options of `POST /diff` and query parameters of a
/// feed's `PUT` and `changes`.
public struct AnswerOptions: Hashable, Sendable {
    /// Whether the batch lists, for each reloaded row and updated section, the names of the
    /// top-level members that changed.
    public var changedMembers: Bool
    /// The most operations a batch may hold; past it the answer is a reload.
    public var maxChanges: Int?

    public init(changedMembers: Bool = false, maxChanges: Int? = nil) {
        self.changedMembers = changedMembers
        self.maxChanges = maxChanges
    }

    /// Whether `batch` is to be answered as a reload: it holds more than `maxChanges` operations.
    public func reloads(_ batch: JSONBatch) -> Bool {
        guard let maxChanges else { return false }
        return batch.operationCount > maxChanges
    }
}

extension JSONBatch {
    /// The number of operations: each index listed and each move counts one.
    public var operationCount: Int {
        switch self {
        case .list(let batch): batch.rows.operationCount
        case .sectioned(let batch): batch.operationCount
        }
    }
}
