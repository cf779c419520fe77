import BatchDiff
import BatchDiffJSON
import Gzip
import Synchronization

/// An answer's JSON as many clients receive it: held once, however many connections send
/// it, and its gzip form made once, by the first client that asks for it, then shared too.
package final class SharedAnswer: Sendable {
    /// The JSON text.
    package let bytes: [UInt8]
    private let compressed = Mutex<[UInt8]?>(nil)
    private let lineBreaks = Mutex<Bool?>(nil)

    /// The answer whose JSON text is `bytes`.
    package init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Whether the text holds a line break (CR or LF), found on the first call: an answer
    /// of one line is framed as one event line, shared, by every stream that sends it.
    package var hasLineBreaks: Bool {
        lineBreaks.withLock { found in
            if let found { return found }
            let made = bytes.contains { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }
            found = made
            return made
        }
    }

    /// The text gzip-compressed; made on the first call (others wait for it, rather than
    /// compress it again).
    package var gzipped: [UInt8] {
        compressed.withLock { compressed in
            if let compressed { return compressed }
            let made = Gzip.compress(bytes)
            compressed = made
            return made
        }
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

    /// A `changes` answer: `full`, and the reload that `makeReload` writes; `batch`, kept
    /// with it, when it is the whole collection's.
    init(
        full: [UInt8], operationCount: Int, batch: JSONBatch? = nil, changedMembers: ChangedMembers? = nil,
        total: (old: Int, new: Int)? = nil, holding heldBytes: Int = 0, makeReload: (@Sendable () -> [UInt8])?
    ) {
        let held = Self.trimmed(full)
        self.full = SharedAnswer(held)
        self.operationCount = operationCount
        self.batch = batch
        self.changedMembers = changedMembers
        self.total = total
        self.makeReload = makeReload
        // A batch holds about two integers an operation; `heldBytes` are what the reload is
        // written from.
        byteCount = held.capacity + (batch?.operationCount ?? 0) * 16 + heldBytes
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
