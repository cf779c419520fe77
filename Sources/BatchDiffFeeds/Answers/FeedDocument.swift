/// A feed's latest version; its answer's JSON is written only when first asked for (a
/// conditional GET that answers 304 needs only ``answerByteCount``), then kept for the
/// version and shared.
package struct FeedDocument: Sendable {
    let feed: FeedID
    let snapshot: Snapshot
    let answers: AnswerCache

    package var version: Int { snapshot.version }

    /// The answer's size in bytes, known without writing it.
    package var answerByteCount: Int { FeedAnswers.latestByteCount(feed: feed.name, snapshot: snapshot) }

    /// The answer, `{"feed","version","data"}`: one for every client of the version.
    package func answer() async throws(FeedError) -> SharedAnswer {
        let question = AnswerCache.Question(feed: feed, latest: snapshot.version, asked: .document)
        let (feed, snapshot) = (feed, snapshot)
        return try await answers.answer(question) { () async throws(FeedError) in
            await Workers.run { ComputedAnswer(FeedAnswers.latest(feed: feed.name, snapshot: snapshot)) }
        }.answer.full
    }
}
