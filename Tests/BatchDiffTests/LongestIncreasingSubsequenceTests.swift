import TestSupport
@testable import BatchDiff
import XCTest

/// The subsequence marked is increasing and as long as any, with and without the run at the
/// front and back that values drawn from a known range let it mark without search.
final class LongestIncreasingSubsequenceTests: XCTestCase {
    /// The length of a longest strictly increasing subsequence, by the quadratic recurrence.
    private func longestLength(_ values: [Int]) -> Int {
        var best = [Int](repeating: 1, count: values.count)
        for i in values.indices {
            for j in 0..<i where values[j] < values[i] { best[i] = max(best[i], best[j] + 1) }
        }
        return best.max() ?? 0
    }

    func testRandomValuesFromARange() {
        var rng = SplitMix64(state: 0x115_5EED)
        for round in 0..<3000 {
            let range = Int.random(in: 0...5, using: &rng)..<Int.random(in: 6...40, using: &rng)
            // Values kept in order at the front and back, shuffled or dropped in between.
            var values = Array(range).filter { _ in Int.random(in: 0..<5, using: &rng) > 0 }
            let middle = Int.random(in: 0...values.count, using: &rng)..<values.count
            let end = Int.random(in: middle.lowerBound...values.count, using: &rng)
            values[middle.lowerBound..<end].shuffle(using: &rng)
            let givenRange: Range<Int>? = round % 3 == 0 ? nil : range
            let marked = longestIncreasingSubsequence(values, within: givenRange)
            let chosen = values.indices.filter { marked[$0] }.map { values[$0] }
            XCTAssertEqual(chosen, chosen.sorted(), "\(values)")  // (values are distinct: sorted is strictly increasing)
            XCTAssertEqual(chosen.count, longestLength(values), "\(values) within \(String(describing: givenRange))")
        }
    }
}
