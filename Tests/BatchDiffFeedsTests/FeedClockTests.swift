import BatchDiffFeeds
import Foundation
import TestSupport
import XCTest

/// Waits end on the feed core's clock, which a test holds: a long poll, a window's wait
/// and many deadlines at once end when the clock says, never before and with no pause.
final class FeedClockTests: XCTestCase {
    private let clock = ManualClock()
    private lazy var feeds = Feeds(
        store: MemoryFeedStore(maxVersions: 16, maxBytes: 1 << 24), maxFeedMemory: 1 << 24, clock: FeedClock(clock)
    )

    private func write(_ text: String, to id: FeedID) async throws -> Int {
        try await feeds.write(Array(text.utf8), to: id, idKey: nil, condition: .none).version
    }

    private func to(_ answer: ChangesAnswer) throws -> Int? {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])["to"] as? Int
    }

    /// A long poll still waits a moment before its wait has passed (a new version wakes it),
    /// and ends, unchanged, the moment it has.
    func testALongPollEndsWhenItsWaitHasPassedOnTheClock() async throws {
        let id = try FeedID("clocked")
        let first = try await write("[1]", to: id)
        let early = Task { [feeds] in try await feeds.changes(of: id, since: first, wait: .seconds(30)) }
        try await waitUntilParked(1)
        clock.advance(by: .seconds(30) - .milliseconds(1))
        let second = try await write("[1,2]", to: id)
        let woken = try await early.value
        XCTAssertEqual(try to(woken), second, "a version 1 ms before the deadline wakes the long poll")

        let late = Task { [feeds] in try await feeds.changes(of: id, since: second, wait: .seconds(30)) }
        try await waitUntilParked(1)
        let advanced = ContinuousClock.now
        clock.advance(by: .seconds(30))
        let expired = try await late.value
        XCTAssertLessThan(ContinuousClock.now - advanced, .seconds(5), "ended by the test's clock, not by the system's")
        XCTAssertEqual(try to(expired), second, "at its deadline, the long poll is answered with no change")
        XCTAssertEqual(expired.operationCount, 0)
    }

    /// Long polls of different waits end in the order of their deadlines, each at its own:
    /// one deadline set after a later one is not held up by it.
    func testDeadlinesEndInTheirOrderWhateverOrderTheyAreSetIn() async throws {
        let id = try FeedID("ordered")
        let first = try await write("[1]", to: id)
        let started = ContinuousClock.now
        var polls: [(wait: Int, task: Task<ChangesAnswer, any Error>)] = []
        for (index, seconds) in [50, 10, 30, 20, 40].enumerated() {
            polls.append((seconds, Task { [feeds] in try await feeds.changes(of: id, since: first, wait: .seconds(seconds)) }))
            try await waitUntilParked(index + 1)
        }
        for elapsed in stride(from: 10, through: 50, by: 10) {
            clock.advance(by: .seconds(10))
            try await waitUntilParked(5 - elapsed / 10)
            for (wait, task) in polls where wait == elapsed {
                let answer = try await task.value
                XCTAssertEqual(try to(answer), first)
            }
        }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5), "ended by the test's clock, not by the system's")
    }

    /// A window's long poll waits on through versions that leave the window as it was, until
    /// its wait has passed on the clock.
    func testAWindowWaitsThroughVersionsOutsideItUntilItsWaitHasPassed() async throws {
        let id = try FeedID("window")
        let first = try await write("[1,2,3]", to: id)
        let poll = Task { [feeds] in
            try await feeds.changes(of: id, since: first, wait: .seconds(20), window: FeedWindow(offset: 0, limit: 2))
        }
        try await waitUntilParked(1)
        clock.advance(by: .seconds(10))
        let outside = try await write("[1,2,3,4]", to: id)
        try await waitUntilParked(1)  // parked again, from the version outside the window
        let advanced = ContinuousClock.now
        clock.advance(by: .seconds(10))
        let answer = try await poll.value
        XCTAssertLessThan(ContinuousClock.now - advanced, .seconds(5), "ended by the test's clock, not by the system's")
        XCTAssertEqual(try to(answer), outside, "answered from the latest, with the window unchanged")
        XCTAssertEqual(answer.operationCount, 0)
    }

    /// Returns once `count` long polls are parked (within 30 s of real time: a regression
    /// fails, it does not hang).
    private func waitUntilParked(_ count: Int, file: StaticString = #filePath, line: UInt = #line) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while feeds.statistics.parkedLongPolls != count {
            guard ContinuousClock.now < deadline else {
                return XCTFail("\(feeds.statistics.parkedLongPolls) long polls parked, not \(count)", file: file, line: line)
            }
            try await Task.sleep(for: .milliseconds(1))
        }
    }
}
