import BatchDiff

/// What a client asks of a batch answer beyond the batch (docs/batch-format.md §6, §7):
/// `changedMembers` and `maxChanges`, options of `POST /diff` and query parameters of a
/// feed's `PUT` and `changes`, the `format` the diff is written in, and how a `changes`
/// answer's values carry changed content (`values`).
public struct AnswerOptions: Hashable, Sendable {
    /// How the diff is written.
    public enum Format: String, Hashable, Sendable, CaseIterable {
        /// The batch (docs/batch-format.md §2), for UIKit.
        case batch
        /// Steps on the flat list an adapter shows (§7), for Android.
        case steps
        /// An RFC 6902 JSON Patch from the old document to the new (§7).
        case jsonPatch = "json-patch"
    }

    /// How a `changes` answer carries each reloaded row and updated section header.
    public enum Values: String, Hashable, Sendable, CaseIterable {
        /// The new content, whole.
        case whole
        /// What the client merges into the content it holds (``MergeValues``).
        case merge
    }

    public var format: Format
    /// Whether the batch lists, for each reloaded row and updated section, the names of the
    /// top-level members that changed.
    public var changedMembers: Bool
    /// The most operations a batch may hold; past it the answer is a reload.
    public var maxChanges: Int?
    /// How a `changes` answer's values carry changed content (the batch format's).
    public var values: Values

    public init(format: Format = .batch, changedMembers: Bool = false, maxChanges: Int? = nil, values: Values = .whole) {
        self.format = format
        self.changedMembers = changedMembers
        self.maxChanges = maxChanges
        self.values = values
    }

    /// The options an answer is computed with, once for every client: `maxChanges` left
    /// out (it is applied to the computed answer).
    public var computed: AnswerOptions {
        var computed = self
        computed.maxChanges = nil
        return computed
    }

    /// Whether `batch` is to be answered as a reload: it holds more than `maxChanges` operations.
    public func reloads(_ batch: JSONBatch) -> Bool {
        reloads(operationCount: batch.operationCount)
    }

    /// Whether a batch of `operationCount` operations is to be answered as a reload.
    public func reloads(operationCount: Int) -> Bool {
        guard let maxChanges else { return false }
        return operationCount > maxChanges
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
