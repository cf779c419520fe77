import BatchDiffJSON
import Synchronization

/// A version a patch made, kept as the version it was made from and the change of text
/// that makes it until it is first read whole; then written once (composing the changes
/// down to a version kept whole, applying them, and reading the text) and kept whole.
final class PatchedText: Sendable {
    private let state: Mutex<State>
    private let idKey: String
    /// The bytes of the changes it is read through, its own included.
    let chainBytes: Int
    /// Bytes held: the version it is read from and the change, then the text written whole
    /// (read without the lock, which a version being written holds).
    private let bytesHeld: Atomic<Int>

    private enum State {
        case change(base: Snapshot, TextDelta)
        case whole(Snapshot.Whole)
    }

    init(base: Snapshot, change: TextDelta, idKey: String) {
        state = Mutex(.change(base: base, change))
        self.idKey = idKey
        chainBytes = base.chainBytes + change.byteCount
        bytesHeld = Atomic(base.byteEstimate + change.byteCount)
    }

    var byteEstimate: Int { bytesHeld.load(ordering: .relaxed) }

    /// The version whole, written on the first call (which the others wait for).
    var whole: Snapshot.Whole {
        state.withLock { state in
            switch state {
            case .whole(let whole): return whole
            case .change(let base, let change):
                var changes = [change]
                var below = base
                while case .patched(let patched) = below.storage, case .change(let next, let change)? = patched.pending {
                    changes.append(change)
                    below = next
                }
                do {
                    let text = try TextDelta.text(applying: changes.reversed(), to: below.bytes)
                    let whole = try Snapshot(text: text, idKey: idKey).whole
                    state = .whole(whole)
                    bytesHeld.store(whole.byteEstimate, ordering: .relaxed)
                    return whole
                } catch {
                    preconditionFailure("a patched version does not read back: \(error)")
                }
            }
        }
    }

    /// The version it is read from and its change, while it is not written whole.
    private var pending: State? {
        state.withLock { state in
            if case .change = state { return state }
            return nil
        }
    }
}
