import BatchDiff
import BatchDiffClient
import Foundation
import TestSupport
import XCTest

/// A row or a section header: an identity and a content version.
private struct Element: Diffable, Hashable {
    var id: Int
    var content = 0
    var identity: Int { id }
}

/// The diffable data source adapter against a snapshot double that keeps UIKit's rules:
/// random batches from the differ take the snapshot to the new collection exactly, every
/// operation allowed, the changed rows reconfigured.
final class DiffableSnapshotTests: XCTestCase {
    private typealias Snapshot = DiffableSnapshotDouble<Int, Int>
    private let identifiers = DiffableIdentifiers<Element, Element, Int, Int>(listSection: -1, section: \.id, item: \.id)

    /// `sections` after a few random edits that keep every identity unique.
    private static func edited(_ sections: [Section<Element, Element>], fresh: inout Int, using random: inout SplitMix64) -> [Section<Element, Element>] {
        var sections = sections
        func next() -> Int {
            fresh += 1
            return fresh
        }
        for _ in 0..<random.below(6) {
            switch random.below(9) {
            case 0 where !sections.isEmpty: sections.remove(at: random.below(sections.count))
            case 1: sections.insert(Section(header: Element(id: next()), items: (0..<random.below(3)).map { _ in Element(id: next()) }), at: random.below(sections.count + 1))
            case 2 where !sections.isEmpty: sections.insert(sections.remove(at: random.below(sections.count)), at: random.below(sections.count + 1))
            case 3 where !sections.isEmpty: sections[random.below(sections.count)].header.content += 1
            case 4 where !sections.isEmpty:
                let section = random.below(sections.count)
                sections[section].items.insert(Element(id: next()), at: random.below(sections[section].items.count + 1))
            case 5 where !sections.isEmpty:
                let section = random.below(sections.count)
                guard !sections[section].items.isEmpty else { break }
                sections[section].items.remove(at: random.below(sections[section].items.count))
            case 6, 7:
                // A row moves, within its section or to another.
                guard let from = sections.indices.filter({ !sections[$0].items.isEmpty }).randomElement(using: &random) else { break }
                let row = sections[from].items.remove(at: random.below(sections[from].items.count))
                let to = random.below(sections.count)
                sections[to].items.insert(row, at: random.below(sections[to].items.count + 1))
            case 8:
                guard let section = sections.indices.filter({ !sections[$0].items.isEmpty }).randomElement(using: &random) else { break }
                sections[section].items[random.below(sections[section].items.count)].content += 1
            default: break
            }
        }
        return sections
    }

    private func assertShows(_ snapshot: Snapshot, _ sections: [Section<Element, Element>], _ context: @autoclosure () -> String, line: UInt = #line) {
        XCTAssertEqual(snapshot.sections.map(\.id), sections.map(\.header.id), context(), line: line)
        XCTAssertEqual(snapshot.sections.map(\.items), sections.map { $0.items.map(\.id) }, context(), line: line)
        XCTAssertEqual(snapshot.traps, [], context(), line: line)
    }

    func testRandomBatchesTakeTheSnapshotToTheNewCollection() throws {
        var random = SplitMix64(state: 0xD1FF_AB1E)
        var fresh = 0
        for round in 0..<300 {
            var shown = Self.edited([], fresh: &fresh, using: &random)
            var snapshot = Snapshot()
            try snapshot.append(FeedCollection<Element, Element>.sectioned(shown), identifiers: identifiers)
            XCTAssertEqual(snapshot.calls.filter { $0 == "appendItems" }.count, shown.filter { !$0.items.isEmpty }.count, "one appendItems per section")
            for step in 0..<10 {
                let next = Self.edited(shown, fresh: &fresh, using: &random)
                let batch = batch(from: shown, to: next)
                let before = snapshot
                let updated = try snapshot.apply(.sectioned(batch), to: .sectioned(next), identifiers: identifiers)
                let context = "round \(round), step \(step): \(shown) -> \(next): \(batch)"
                assertShows(snapshot, next, context)
                XCTAssertEqual(
                    snapshot.reconfigured.dropFirst(before.reconfigured.count).sorted(), batch.rows.reloaded.map { shown[$0.section].items[$0.row].id }.sorted(),
                    "the changed rows are reconfigured: \(context)"
                )
                XCTAssertEqual(updated, batch.sections.updated.map { next[$0].header.id }, context)
                XCTAssertFalse(snapshot.calls.dropFirst(before.calls.count).contains("deleteAllItems"), "never filled again whole: \(context)")
                shown = next
                if testRun?.failureCount ?? 0 > 0 { return }
            }
        }
    }

    func testAListIsOneSection() throws {
        var random = SplitMix64(state: 0x11_57)
        var fresh = 0
        var shown = (0..<20).map { _ in Element(id: { fresh += 1; return fresh }()) }
        var snapshot = Snapshot()
        try snapshot.append(FeedCollection<Element, Element>.list(shown), identifiers: identifiers)
        for step in 0..<500 {
            let next = Self.edited([Section(header: Element(id: -1), items: shown)], fresh: &fresh, using: &random).first { $0.header.id == -1 }?.items ?? shown
            let batch = batch(from: shown, to: next)
            try snapshot.apply(.list(batch), to: FeedCollection<Element, Element>.list(next), identifiers: identifiers)
            XCTAssertEqual(snapshot.sections.map(\.id), [-1], "step \(step)")
            XCTAssertEqual(snapshot.sections.first?.items, next.map(\.id), "step \(step): \(batch)")
            XCTAssertEqual(snapshot.traps, [], "step \(step)")
            shown = next
        }
    }

    func testCellsThatMustBeRebuiltAreReloaded() throws {
        let old = [Element(id: 1), Element(id: 2), Element(id: 3)]
        let new = [Element(id: 1, content: 1), Element(id: 2, content: 1), Element(id: 3)]
        var snapshot = Snapshot()
        try snapshot.append(FeedCollection<Element, Element>.list(old), identifiers: identifiers)
        try snapshot.apply(.list(batch(from: old, to: new)), to: FeedCollection<Element, Element>.list(new), identifiers: identifiers, rebuilding: { $0 == 2 })
        XCTAssertEqual(snapshot.reconfigured, [1])
        XCTAssertEqual(snapshot.reloaded, [2])
    }

    /// A reload, or a snapshot that does not show what the batch starts from, is filled
    /// again whole; two rows of one identity are refused and change nothing.
    func testReloadsDriftAndRepeatedIdentities() throws {
        let old = [Element(id: 1), Element(id: 2)]
        let new = [Element(id: 2), Element(id: 3)]
        var snapshot = Snapshot()
        try snapshot.append(FeedCollection<Element, Element>.list(old), identifiers: identifiers)
        try snapshot.apply(.reload(oldCounts: [2], newCounts: [2]), to: FeedCollection<Element, Element>.list(new), identifiers: identifiers)
        XCTAssertEqual(snapshot.sections.first?.items, [2, 3])
        // The batch starts from three rows; the snapshot shows two.
        try snapshot.apply(.list(batch(from: old + [Element(id: 9)], to: old)), to: FeedCollection<Element, Element>.list(old), identifiers: identifiers)
        XCTAssertEqual(snapshot.sections.first?.items, [1, 2])
        XCTAssertEqual(snapshot.calls.filter { $0 == "deleteAllItems" }.count, 2)
        // Counts that fit but identifiers that do not (the snapshot names the rows otherwise):
        // inserting 3 where 3 already is would trap; the snapshot is filled whole instead.
        var other = Snapshot()
        try other.append(FeedCollection<Element, Element>.list([Element(id: 3), Element(id: 7)]), identifiers: identifiers)
        try other.apply(.list(batch(from: old, to: new)), to: FeedCollection<Element, Element>.list(new), identifiers: identifiers)
        XCTAssertEqual(other.sections.first?.items, [2, 3])
        XCTAssertEqual(other.traps, [])
        let before = snapshot
        let repeated = [Element(id: 1), Element(id: 1)]
        XCTAssertThrowsError(try snapshot.apply(.list(batch(from: old, to: repeated)), to: FeedCollection<Element, Element>.list(repeated), identifiers: identifiers))
        XCTAssertEqual(snapshot.calls, before.calls, "nothing changed")
        XCTAssertEqual(snapshot.traps, [])
    }

    /// A data source shows an update with one snapshot applied, animated.
    func testADataSourceAppliesOnce() throws {
        try MainActor.assumeIsolated {
            let identifiers = DiffableIdentifiers<Element, Element, Int, Int>(listSection: -1, section: \.id, item: \.id)
            let source = DataSourceDouble()
            let old = [Element(id: 1), Element(id: 2)]
            var snapshot = Snapshot()
            try snapshot.append(FeedCollection<Element, Element>.list(old), identifiers: identifiers)
            source.shown = snapshot
            let new = [Element(id: 2), Element(id: 1, content: 1), Element(id: 4)]
            let update = FeedUpdate(version: 2, collection: FeedCollection<Element, Element>.list(new), update: .list(batch(from: old, to: new)))
            try source.show(update, identifiers: identifiers)
            XCTAssertEqual(source.applied, 1)
            XCTAssertEqual(source.shown.sections.first?.items, [2, 1, 4])
            XCTAssertEqual(source.shown.traps, [])
        }
    }

    /// JSON identities are hashed as the server compares them: 1 and 1.0 are one identity.
    func testJSONIdentitiesCompareAsTheServerDoes() throws {
        let one = try JSONDecoder().decode(JSON.self, from: Data(#"{"id": 1}"#.utf8))
        let onePointZero = try JSONDecoder().decode(JSON.self, from: Data(#"{"id": 1.0}"#.utf8))
        XCTAssertEqual(one.identity(), onePointZero.identity())
        XCTAssertEqual(Set([one.identity(), onePointZero.identity()]).count, 1)
        XCTAssertNotEqual(one.identity(), JSON.string("1"))
    }
}

@MainActor
private final class DataSourceDouble: DiffableDataSource {
    var shown = DiffableSnapshotDouble<Int, Int>()
    private(set) var applied = 0

    func snapshot() -> DiffableSnapshotDouble<Int, Int> { shown }

    func applySnapshot(_ snapshot: DiffableSnapshotDouble<Int, Int>, animatingDifferences: Bool) {
        applied += 1
        shown = snapshot
    }
}
