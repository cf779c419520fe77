import BatchDiff
import BatchDiffJSON
import Foundation

// `make bench`: the differ on DifferenceKit's workloads, against the stdlib's
// CollectionDifference on the same data in the same run. Release builds only.

/// The median wall time of `runs` calls of `body`, in milliseconds, and its last result.
func measure<Result>(runs: Int, _ body: () -> Result) -> (milliseconds: Double, result: Result) {
    var times: [Double] = []
    var result: Result?
    for _ in 0..<runs {
        let start = DispatchTime.now().uptimeNanoseconds
        result = body()
        times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
    }
    return (times.sorted()[times.count / 2], result!)
}

/// Strings laid out as a request body holds them: UTF-8 bytes in one buffer, with spans.
struct PackedStrings {
    let bytes: [UInt8]
    let spans: [Range<Int>]

    init(_ strings: [String]) {
        var bytes: [UInt8] = []
        spans = strings.map { string in
            let start = bytes.count
            bytes.append(contentsOf: string.utf8)
            return start..<bytes.count
        }
        self.bytes = bytes
    }

    /// The fingerprints of all strings, as the JSON front makes them from a body.
    func fingerprints() -> [Fingerprint] {
        bytes.withUnsafeBytes { buffer in spans.map { Fingerprint.string(UnsafeRawBufferPointer(rebasing: buffer[$0])) } }
    }
}

/// Rows as the JSON front makes them: fingerprints of identity and content. Making them
/// is part of the measured time, as it is of a request's.
func items(_ strings: PackedStrings) -> [JSONItem] {
    strings.fingerprints().map { JSONItem(identity: $0, content: $0, span: 0..<0) }
}

func describe(_ rows: RowChanges<some Hashable & Comparable & Sendable>) -> String {
    "deletes \(rows.deleted.count), inserts \(rows.inserted.count), reloads \(rows.reloaded.count), moves \(rows.moved.count)"
}

/// Prints a line at once, so a long baseline does not hold back what is already measured.
func report(_ line: String) {
    print(line)
    fflush(nil)
}

func format(_ milliseconds: Double) -> String { String(format: "%.2f ms", milliseconds) }

let runs = max(1, Int(ProcessInfo.processInfo.environment["BENCH_RUNS"] ?? "") ?? 7)
let baselineRuns = Int(ProcessInfo.processInfo.environment["BENCH_BASELINE_RUNS"] ?? "") ?? 5
var rng = SystemRandomNumberGenerator()
if CommandLine.arguments.count == 3 && CommandLine.arguments[1] == "e2e" {
    let workload = ListWorkload(count: 100_000, deleted: 20_000..<30_000, inserted: 30_000..<40_000, shuffled: 0..<2_000, using: &rng)
    try EndToEnd.run(serverBinary: CommandLine.arguments[2], workload: workload, runs: runs)
    exit(0)
}

report("BatchDiff differ benchmark (release build), median of \(runs) runs; baseline: stdlib difference(from:).inferringMoves(), median of \(baselineRuns)")
report("")

let lists = [
    ListWorkload(count: 5_000, deleted: 2_000..<3_000, inserted: 3_000..<4_000, shuffled: 0..<200, using: &rng),
    ListWorkload(count: 100_000, deleted: 20_000..<30_000, inserted: 30_000..<40_000, shuffled: 0..<2_000, using: &rng),
]
for workload in lists {
    let (source, target) = (PackedStrings(workload.source), PackedStrings(workload.target))
    let ours = measure(runs: runs) { batch(from: items(source), to: items(target)) }
    report(workload.name)
    report("  batchdiff  \(format(ours.milliseconds))   \(describe(ours.result.rows))")
    guard baselineRuns > 0 else { continue }
    let stdlib = measure(runs: baselineRuns) { workload.target.difference(from: workload.source).inferringMoves() }
    let stdlibMoves = stdlib.result.insertions.filter { if case .insert(_, _, let from) = $0 { from != nil } else { false } }.count
    report("  stdlib     \(format(stdlib.milliseconds))   removals \(stdlib.result.removals.count), insertions \(stdlib.result.insertions.count) (\(stdlibMoves) as moves)")
    report("  ratio      batchdiff takes \(String(format: "%.4f", ours.milliseconds / stdlib.milliseconds)) of the stdlib's time (\(String(format: "%.0fx", stdlib.milliseconds / ours.milliseconds)) faster)")
}

let sectioned = SectionedWorkload(sections: 100, rows: 1_000, using: &rng)
/// A sectioned collection laid out as a body holds it, and made into sections of rows.
struct PackedSections {
    let ids: PackedStrings
    let rowIDs: PackedStrings
    let rowContents: PackedStrings
    let rowCounts: [Int]

    init(_ value: [(id: String, rows: SectionedWorkload.Rows)]) {
        ids = PackedStrings(value.map(\.id))
        rowIDs = PackedStrings(value.flatMap { $0.rows.map(\.id) })
        rowContents = PackedStrings(value.flatMap { $0.rows.map(\.content) })
        rowCounts = value.map(\.rows.count)
    }

    func sections() -> [Section<JSONSectionHeader, JSONItem>] {
        let headers = ids.fingerprints()
        var rows = zip(rowIDs.fingerprints(), rowContents.fingerprints()).makeIterator()
        return zip(headers, rowCounts).map { header, count in
            Section(
                header: JSONSectionHeader(identity: header, content: header, span: 0..<0),
                items: (0..<count).map { _ in let row = rows.next()!; return JSONItem(identity: row.0, content: row.1, span: 0..<0) }
            )
        }
    }
}
let (packedSource, packedTarget) = (PackedSections(sectioned.source), PackedSections(sectioned.target))
let ours = measure(runs: runs) { batch(from: packedSource.sections(), to: packedTarget.sections()) }
// The stdlib has no sections (and diffing all 100,000 rows flattened takes over a minute):
// its baseline diffs the rows of each section that keeps its identity, section by section.
let sectionPairs = sectioned.target.compactMap { target in
    sectioned.source.first { $0.id == target.id }.map { source in
        (source.rows.map(\.content), target.rows.map(\.content))
    }
}
let sectionOps = ours.result.sections
report(sectioned.name)
report("  batchdiff  \(format(ours.milliseconds))   \(describe(ours.result.rows)); sections: deletes \(sectionOps.deleted.count), inserts \(sectionOps.inserted.count), moves \(sectionOps.moved.count), updates \(sectionOps.updated.count)")
if baselineRuns > 0 {
    let stdlib = measure(runs: baselineRuns) { sectionPairs.map { $0.1.difference(from: $0.0).inferringMoves() } }
    report("  stdlib     \(format(stdlib.milliseconds))   (section by section, \(sectionPairs.count) sections) removals \(stdlib.result.map(\.removals.count).reduce(0, +)), insertions \(stdlib.result.map(\.insertions.count).reduce(0, +))")
    report("  ratio      batchdiff takes \(String(format: "%.4f", ours.milliseconds / stdlib.milliseconds)) of the stdlib's time (\(String(format: "%.0fx", stdlib.milliseconds / ours.milliseconds)) faster)")
}
