import BatchDiff
import BatchDiffJSON
import Synchronization

/// An answer's JSON as many clients receive it: held once, however many connections send
/// it, with its media type; what a transport makes of it (its gzip form, its framing as an
/// event) is made once, by the first client that asks for it, and kept beside it, shared too
/// (``memo(_:)``). The feed core knows no transport: it keeps what it is handed to make.
package final class SharedAnswer: Sendable {
    /// The JSON text.
    package let bytes: [UInt8]
    /// What the text is.
    package let mediaType: AnswerMediaType
    private let memos = Mutex<[String: any Sendable]>([:])

    /// The answer whose JSON text is `bytes`, of `mediaType`.
    package init(_ bytes: [UInt8], mediaType: AnswerMediaType = .json) {
        self.bytes = bytes
        self.mediaType = mediaType
    }

    /// What `memo` makes of the text, made on the first call (others wait for it rather
    /// than make it again) and kept with the answer.
    package func memo<Value: Sendable>(_ memo: AnswerMemo<Value>) -> Value {
        memos.withLock { memos in
            if let made = memos[memo.name] as? Value { return made }
            let made = memo.make(bytes)
            memos[memo.name] = made
            return made
        }
    }
}

/// What an answer's text is: a JSON value (an object: a `changes` answer, a document, a
/// page), or a JSON Patch (RFC 6902).
package enum AnswerMediaType: Sendable {
    case json, jsonPatch

    /// The media type's name.
    package var name: String {
        switch self {
        case .json: "application/json"
        case .jsonPatch: "application/json-patch+json"
        }
    }
}

/// Something made from an answer's text and kept beside it (``SharedAnswer/memo(_:)``),
/// named once by the layer that makes it.
package struct AnswerMemo<Value: Sendable>: Sendable {
    let name: String
    let make: @Sendable ([UInt8]) -> Value

    /// A memo called `name` (unique among memos), made by `make`.
    package init(_ name: String, make: @escaping @Sendable ([UInt8]) -> Value) {
        self.name = name
        self.make = make
    }
}

/// What one question of the answer cache computed, whatever `maxChanges` its clients send
/// (``AnswerCache``): the answer, and for a `changes` answer the number of operations of its
/// batch and what writes the reload a client whose `maxChanges` it passes gets instead.
final class ComputedAnswer: Sendable {
    /// The answer in full: the document, or the batch with its values (or steps, or patch).
    let full: SharedAnswer
    /// The batch's operations (0 for a document).
    let operationCount: Int
    /// The batch of a `changes` answer for the whole collection, which windows of it are
    /// seen through (``ListBatchWindow``); `nil` for other answers.
    let batch: JSONBatch?
    /// The batch's changed members, when the answer was asked with them (a window's are
    /// taken from them).
    let changedMembers: ChangedMembers?
    /// The batch's merge entries, when the answer was asked with `values=merge` (a window's
    /// are taken from them).
    let merge: MergeValues?
    /// A window's answer: the whole collection's rows (sections), old and new.
    let total: (old: Int, new: Int)?
    /// What writes the reload answer (the latest collection whole); `nil` for a document.
    private let makeReload: (@Sendable () -> [UInt8])?
    /// Bytes the cache counts for it: the full answer, held at its length. Neither its gzip form
    /// (at most as large, made once) nor a reload (written for each client that needs one,
    /// and gone with its answer: kept, 64 questions of a big feed would hold 64 copies of
    /// it) is counted.
    let byteCount: Int

    /// A document, or an answer that never reloads.
    convenience init(_ full: [UInt8]) {
        self.init(full: full, operationCount: 0, makeReload: nil)
    }

    /// A `changes` answer: `full` (of `mediaType`), and the reload that `makeReload` writes;
    /// `batch`, kept with it, when it is the whole collection's.
    init(
        full: [UInt8], mediaType: AnswerMediaType = .json, operationCount: Int, batch: JSONBatch? = nil, changedMembers: ChangedMembers? = nil,
        merge: MergeValues? = nil, total: (old: Int, new: Int)? = nil, holding heldBytes: Int = 0, makeReload: (@Sendable () -> [UInt8])?
    ) {
        let held = Self.trimmed(full)
        self.full = SharedAnswer(held, mediaType: mediaType)
        self.operationCount = operationCount
        self.batch = batch
        self.changedMembers = changedMembers
        self.merge = merge
        self.total = total
        self.makeReload = makeReload
        // A batch holds about two integers an operation; `heldBytes` are what the reload is
        // written from.
        let mergeBytes = merge.map { $0.rows.reduce(0) { $0 + $1.count } + $0.sections.reduce(0) { $0 + $1.count } } ?? 0
        byteCount = held.capacity + (batch?.operationCount ?? 0) * 16 + heldBytes + mergeBytes
    }

    /// `text` in a buffer of its length when the one it was written into has much more room
    /// (a writer's buffer grows by doubling, and starts at a kilobyte: a small feed's answer,
    /// a few hundred bytes, would hold three times its size for as long as it is kept).
    private static func trimmed(_ text: [UInt8]) -> [UInt8] {
        text.capacity - text.count > text.count / 8 + 32 ? Array(unsafeUninitializedCapacity: text.count) { buffer, count in
            count = buffer.initialize(fromContentsOf: text)
        } : text
    }

    /// The answer a client with `maxChanges` gets: a reload past it, else the full one.
    func answer(maxChanges: Int?) -> SharedAnswer {
        guard let makeReload, AnswerOptions(maxChanges: maxChanges).reloads(operationCount: operationCount) else { return full }
        return SharedAnswer(makeReload())
    }
}
