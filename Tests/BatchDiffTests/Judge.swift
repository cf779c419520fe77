import BatchDiff
import XCTest

/// Diffs `old` into `new` and checks the batch both ways: applying it with the fill
/// semantics (docs/batch-format.md §3) must give `new` exactly, and it must break no rule of docs/batch-format.md §4.
@discardableResult
func diffAndJudge(
    _ old: [TestSection], _ new: [TestSection], options: DiffOptions = DiffOptions(),
    file: StaticString = #filePath, line: UInt = #line
) -> SectionedBatch {
    let result = batch(from: old, to: new, options: options)
    do {
        let applied = try result.apply(to: old, values: result.values(from: new))
        XCTAssertEqual(applied, new, "applying the batch \(result) does not give the new collection", file: file, line: line)
    } catch {
        XCTFail("the batch \(result) cannot be applied: \(error)", file: file, line: line)
    }
    let broken = brokenRules(result, old: old, new: new, allowsMoves: options.allowsMoves)
    XCTAssert(broken.isEmpty, "broken rules \(broken) in \(result) for \(old) -> \(new)", file: file, line: line)
    judgeSteps(result, old: old, new: new, headers: true, file: file, line: line)
    return result
}

/// The same for lists.
@discardableResult
func diffAndJudge(
    _ old: [Row], _ new: [Row], options: DiffOptions = DiffOptions(), file: StaticString = #filePath, line: UInt = #line
) -> ListBatch {
    let result = batch(from: old, to: new, options: options)
    do {
        let applied = try result.apply(to: old, values: result.values(from: new))
        XCTAssertEqual(applied, new, "applying the batch \(result) does not give the new list", file: file, line: line)
    } catch {
        XCTFail("the batch \(result) cannot be applied: \(error)", file: file, line: line)
    }
    let asSections = { (rows: [Row]) in [TestSection(header: Header(id: 0), items: rows)] }
    let broken = brokenRules(result.sectioned, old: asSections(old), new: asSections(new), allowsMoves: options.allowsMoves)
    XCTAssert(broken.isEmpty, "broken rules \(broken) in \(result)", file: file, line: line)
    judgeSteps(result.sectioned, old: asSections(old), new: asSections(new), headers: false, file: file, line: line)
    return result
}
