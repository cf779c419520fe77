import BatchDiff
import XCTest

/// What an adapter shows at one position of the flat list: a section header or a row.
enum FlatElement: Equatable {
    case header(Header)
    case row(Row)

    var identity: String {
        switch self {
        case .header(let header): "h\(header.id)"
        case .row(let row): "r\(row.id)"
        }
    }
}

/// The flat list of `sections`: each header followed by its rows (only rows for a list).
func flatList(_ sections: [TestSection], headers: Bool) -> [FlatElement] {
    sections.flatMap { (headers ? [.header($0.header)] : []) + $0.items.map(FlatElement.row) }
}

/// Applies `steps` to `old` as an adapter does, written here apart from the library, and
/// checks the result against `new` (docs/batch-format.md §7): the same identity at every
/// position, inserted positions inserted, and `change` covering exactly the positions whose
/// content differs from the old element that lands there. Returns what went wrong.
func stepProblems(_ steps: [Step], old: [FlatElement], new: [FlatElement]) -> [String] {
    // Each position: the old element there (nil: inserted), and whether a change named it.
    var list: [(element: FlatElement?, changed: Bool)] = old.map { ($0, false) }
    for step in steps {
        switch step {
        case .remove(let at, let count):
            guard count > 0, at >= 0, at + count <= list.count else { return ["\(step) outside \(list.count) positions"] }
            list.removeSubrange(at..<(at + count))
        case .insert(let at, let count):
            guard count > 0, at >= 0, at <= list.count else { return ["\(step) outside \(list.count) positions"] }
            list.insert(contentsOf: [(element: FlatElement?, changed: Bool)](repeating: (nil, false), count: count), at: at)
        case .move(let from, let to):
            guard from >= 0, from < list.count, to >= 0, to < list.count else { return ["\(step) outside \(list.count) positions"] }
            list.insert(list.remove(at: from), at: to)
        case .change(let at, let count):
            guard count > 0, at >= 0, at + count <= list.count else { return ["\(step) outside \(list.count) positions"] }
            for index in at..<(at + count) {
                guard !list[index].changed else { return ["\(step) names position \(index) twice"] }
                list[index].changed = true
            }
        }
    }
    guard list.count == new.count else { return ["\(list.count) positions after the steps, \(new.count) new"] }
    var problems: [String] = []
    for (index, (element, changed)) in list.enumerated() {
        guard let element else {
            if changed { problems.append("inserted position \(index) also changed") }
            continue
        }
        if element.identity != new[index].identity { problems.append("position \(index): \(element) where \(new[index]) belongs") }
        if changed != (element != new[index]) { problems.append("position \(index): changed \(changed), content \(element) -> \(new[index])") }
    }
    return problems
}

/// Checks the steps of `batch` from `old` to `new`, with and without headers: they apply,
/// and they keep at least as many elements in place as the batch does.
func judgeSteps(_ batch: SectionedBatch, old: [TestSection], new: [TestSection], headers: Bool, file: StaticString, line: UInt) {
    let steps: [Step]
    do {
        steps = headers ? try batch.steps() : try ListBatch(rows: batch.rows.map(\.row), oldCount: batch.oldCounts[0], newCount: batch.newCounts[0]).steps()
    } catch {
        return XCTFail("the steps of \(batch) cannot be made: \(error)", file: file, line: line)
    }
    let problems = stepProblems(steps, old: flatList(old, headers: headers), new: flatList(new, headers: headers))
    XCTAssert(problems.isEmpty, "\(problems) in steps \(steps) of \(batch)", file: file, line: line)
    let moves = steps.filter { if case .move = $0 { true } else { false } }.count
    let batchMoves = batch.rows.moved.count + batch.sections.moved.reduce(0) { $0 + (headers ? 1 : 0) + batch.oldCounts[$1.from] }
    XCTAssertLessThanOrEqual(moves, batchMoves, "steps \(steps) move more than the batch \(batch)", file: file, line: line)
}
