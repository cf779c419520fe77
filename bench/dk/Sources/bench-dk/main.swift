import BatchDiff
import BatchDiffJSON
import DifferenceKit
import Foundation

// `make bench-dk`: BatchDiff's differ and DifferenceKit's on the same UUID strings (issue
// 12's workloads), median of several runs each, alternating, in one process; identity
// hashing is in both times. BatchDiff twice: on Swift strings through its generic API
// (each hashed with the standard library's hasher, as DifferenceKit hashes them), and as a
// request runs it, each string fingerprinted from its UTF-8 bytes (what the JSON front
// does). Workloads.swift is BatchDiffBenchmark's.

extension String: @retroactive Differentiable {}
extension String: @retroactive Diffable {
    public var identity: String { self }
    /// Both differs' requirement (each protocol would give it otherwise: ambiguous).
    public func isContentEqual(to other: String) -> Bool { self == other }
}

/// A row of the sectioned workload, for both differs: identity `id`, content `content`.
struct Row: Differentiable, Diffable {
    let id: String
    let content: String
    var differenceIdentifier: String { id }
    var identity: String { id }
    func isContentEqual(to other: Row) -> Bool { content == other.content }
}

/// Rows as the JSON front makes them from a body: each string fingerprinted (timed).
func fingerprinted(_ strings: [String]) -> [JSONItem] {
    strings.map { string in
        let fingerprint = Fingerprint.string(string)
        return JSONItem(identity: fingerprint, content: fingerprint, span: 0..<0)
    }
}

/// The median wall time of `runs` calls of `body`, in milliseconds.
func median(runs: Int, _ body: () -> Void) -> Double {
    var times: [Double] = []
    for _ in 0..<runs {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
    }
    return times.sorted()[times.count / 2]
}

/// Runs both differs `rounds` times, alternating, and prints each median and the ratio.
func compare(_ name: String, goal: Double, rounds: Int, batchDiff: () -> Void, differenceKit: () -> Void) {
    var ratios: [Double] = []
    for round in 1...rounds {
        let ours = median(runs: 5, batchDiff)
        let theirs = median(runs: 5, differenceKit)
        ratios.append(ours / theirs)
        print(String(format: "%@ round %d: batchdiff %.2f ms, DifferenceKit %.2f ms, ratio %.3f", name, round, ours, theirs, ours / theirs))
        fflush(nil)
    }
    let sorted = ratios.sorted()
    print(String(format: "%@: batchdiff takes %.3f (%.3f to %.3f over %d rounds) of DifferenceKit's time; goal at most %.2f",
                 name, sorted[sorted.count / 2], sorted.first!, sorted.last!, rounds, goal))
    fflush(nil)
}

let rounds = max(1, Int(ProcessInfo.processInfo.environment["BENCH_ROUNDS"] ?? "") ?? 3)
var rng = SystemRandomNumberGenerator()
let list = ListWorkload(count: 100_000, deleted: 20_000..<30_000, inserted: 30_000..<40_000, shuffled: 0..<2_000, using: &rng)
compare("differ core, \(list.name)", goal: 0.10, rounds: rounds, batchDiff: {
    _ = batch(from: list.source, to: list.target)
}, differenceKit: {
    _ = StagedChangeset(source: list.source, target: list.target)
})
compare("differ core, fingerprinted as a request, \(list.name)", goal: 0.10, rounds: rounds, batchDiff: {
    _ = batch(from: fingerprinted(list.source), to: fingerprinted(list.target))
}, differenceKit: {
    _ = StagedChangeset(source: list.source, target: list.target)
})

let sectioned = SectionedWorkload(sections: 100, rows: 1_000, using: &rng)
let ourSource = sectioned.source.map { Section(header: $0.id, items: $0.rows.map { Row(id: $0.id, content: $0.content) }) }
let ourTarget = sectioned.target.map { Section(header: $0.id, items: $0.rows.map { Row(id: $0.id, content: $0.content) }) }
let theirSource = sectioned.source.map { ArraySection(model: $0.id, elements: $0.rows.map { Row(id: $0.id, content: $0.content) }) }
let theirTarget = sectioned.target.map { ArraySection(model: $0.id, elements: $0.rows.map { Row(id: $0.id, content: $0.content) }) }
compare("differ core, \(sectioned.name)", goal: 0.15, rounds: rounds, batchDiff: {
    _ = batch(from: ourSource, to: ourTarget)
}, differenceKit: {
    _ = StagedChangeset(source: theirSource, target: theirTarget)
})
