import BatchDiffJSON
import Synchronization

/// Answers of `GET /feeds/{id}` and `changes?since=` kept for reuse: per feed, for its
/// latest version only, and bounded: in questions and bytes per feed, and in all by the
/// room the feeds' memory leaves them (other feeds' answers are dropped to make room for a
/// new one; one that still does not fit is not kept; ``ComputedAnswer/byteCount`` says what
/// is counted). Answers being computed are shared
/// too, so a question many clients ask at once costs one diff (docs/feeds.md §9). A
/// question leaves out what only decides how a computed batch is written (`maxChanges`):
/// clients that differ in it share one computation (``ComputedAnswer``).
final class AnswerCache: Sendable {
    /// A question: the latest document of one feed, or its changes from a version.
    struct Question: Hashable {
        var feed: FeedID
        var latest: Int
        var asked: Asked
    }

    /// What a question asks for.
    enum Asked: Hashable {
        /// The latest document, `{"feed","version","data"}`.
        case document
        /// The changes from `since`, as `options` ask for them (``AnswerOptions/computed``:
        /// `maxChanges` aside).
        case changes(since: Int, AnswerOptions)
        /// A page of the latest collection.
        case page(PageStart, limit: Int)
        /// The changes of a window from `since`, answered as from `from` (the client's version,
        /// its window the same at `since`), as `options` ask for them (`maxChanges` aside).
        case window(since: Int, from: Int, FeedWindow, AnswerOptions)
        /// A range's changes from `since` (to the question's `latest`), always the differ's:
        /// never an answer a write kept (a patch's batch may differ from the differ's), so the
        /// same range is the same bytes wherever and whenever it is asked.
        case range(since: Int, AnswerOptions)

        /// The changes from `since` as `options` ask for them, `maxChanges` aside.
        static func changes(since: Int, options: AnswerOptions) -> Asked {
            .changes(since: since, options.computed)
        }

        /// Whether it asks for merge values (`values=merge`).
        var asksMerge: Bool {
            switch self {
            case .changes(_, let options), .window(_, _, _, let options), .range(_, let options): options.values == .merge
            case .document, .page: false
            }
        }
    }

    /// Bytes of answers kept per feed; past it that feed's answers are dropped.
    static let perFeedLimit = 32 << 20
    /// Questions kept per feed; past it that feed's answers are dropped.
    static let perFeedQuestions = 64

    private struct Kept {
        var latest: Int
        var answers: [Question: ComputedAnswer] = [:]
        var bytes = 0
        /// Whether a client asked a question of this version (not only a write kept one).
        var asked = false
        /// Whether a client asked one with merge values.
        var askedMerge = false

        mutating func saw(_ question: Question) {
            asked = true
            askedMerge = askedMerge || question.asked.asksMerge
        }
    }

    private struct State {
        var kept: [FeedID: Kept] = [:]
        var bytes = 0
        var computing: [Question: Task<ComputedAnswer, any Error>] = [:]

        mutating func remove(_ feed: FeedID) {
            if let removed = kept.removeValue(forKey: feed) { bytes -= removed.bytes }
        }
    }

    private let state = Mutex(State())
    /// The bytes answers may hold now.
    private let room: @Sendable () -> Int

    init(room: @escaping @Sendable () -> Int) {
        self.room = room
    }

    /// The answer to `question`, and whether it was reused (kept, or computed for another
    /// client at the same time) rather than computed by `compute` for this call.
    func answer(
        _ question: Question, compute: @escaping @Sendable () async throws(FeedError) -> ComputedAnswer
    ) async throws(FeedError) -> (answer: ComputedAnswer, reused: Bool) {
        enum Found {
            case kept(ComputedAnswer)
            case computing(Task<ComputedAnswer, any Error>, mine: Bool)
        }
        let found = state.withLock { state -> Found in
            if let kept = state.kept[question.feed], kept.latest == question.latest, let answer = kept.answers[question] {
                state.kept[question.feed]?.saw(question)
                return .kept(answer)
            }
            if let task = state.computing[question] { return .computing(task, mine: false) }
            let task = Task { () async throws -> ComputedAnswer in try await compute() }
            state.computing[question] = task
            return .computing(task, mine: true)
        }
        switch found {
        case .kept(let answer):
            return (answer, true)
        case .computing(let task, let mine):
            let result = await task.result
            if mine {
                state.withLock { state in
                    state.computing[question] = nil
                    if case .success(let answer) = result { keep(answer, for: question, asked: true, in: &state) }
                }
            }
            do {
                return (try result.get(), !mine)
            } catch {
                throw error as? FeedError ?? .internalFailure("\(error)")
            }
        }
    }

    /// The answer kept for `question`, if any (none is computed).
    func kept(_ question: Question) -> ComputedAnswer? {
        state.withLock { state in
            guard let kept = state.kept[question.feed], kept.latest == question.latest else { return nil }
            return kept.answers[question]
        }
    }

    /// Keeps `answer` for `question` (an answer made with a write, say), for clients to come.
    func keep(_ answer: ComputedAnswer, for question: Question) {
        state.withLock { keep(answer, for: question, asked: false, in: &$0) }
    }

    /// Whether a client asked a question of `feed` at version `latest` (a write's answer
    /// for the clients at that version is worth keeping then: they follow the feed).
    func wasAsked(_ feed: FeedID, atLatest latest: Int) -> Bool {
        state.withLock { state in state.kept[feed].map { $0.latest == latest && $0.asked } ?? false }
    }

    /// Whether a client asked a question of `feed` with merge values at version `latest`
    /// (a write's merge answer is worth keeping then: its clients follow with merge values).
    func wasAskedMerge(_ feed: FeedID, atLatest latest: Int) -> Bool {
        state.withLock { state in state.kept[feed].map { $0.latest == latest && $0.askedMerge } ?? false }
    }

    private func keep(_ answer: ComputedAnswer, for question: Question, asked: Bool, in state: inout State) {
        var kept = state.kept[question.feed] ?? Kept(latest: question.latest)
        guard kept.latest <= question.latest else { return }  // a newer version is here already
        if kept.latest < question.latest || kept.bytes + answer.byteCount > Self.perFeedLimit || kept.answers.count >= Self.perFeedQuestions {
            kept = Kept(latest: question.latest)
        }
        state.remove(question.feed)
        kept.bytes += answer.byteCount - (kept.answers[question]?.byteCount ?? 0)  // as allocated
        kept.answers[question] = answer
        if asked { kept.saw(question) }
        let room = room()
        if state.bytes + kept.bytes > room {
            state.kept = [:]
            state.bytes = 0
        }
        guard kept.bytes <= room else { return }
        state.kept[question.feed] = kept
        state.bytes += kept.bytes
    }

    /// Drops the answers of `feed` made for a version older than `version` (all of them
    /// when `version` is `nil`: the feed is gone).
    func drop(_ feed: FeedID, olderThan version: Int?) {
        state.withLock { state in
            guard let kept = state.kept[feed], version.map({ kept.latest < $0 }) ?? true else { return }
            state.remove(feed)
        }
    }

    /// Drops every answer kept.
    func removeAll() {
        state.withLock { state in
            state.kept = [:]
            state.bytes = 0
        }
    }

    /// Bytes of the answers kept.
    var bytes: Int { state.withLock { $0.bytes } }
}
