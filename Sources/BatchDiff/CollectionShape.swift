/// The shape of a sectioned collection: how many rows each section has, and where each
/// section's rows start when all rows are numbered in one flat sequence.
@usableFromInline
struct CollectionShape: Sendable {
    /// `starts[s]..<starts[s + 1]` are the flat indexes of the rows of section `s`.
    @usableFromInline let starts: [Int]

    @inlinable
    init<Rows: Sequence<Int>>(rowCounts: Rows) {
        var starts = [0]
        starts.reserveCapacity(rowCounts.underestimatedCount + 1)
        for count in rowCounts { starts.append(starts[starts.count - 1] + count) }
        self.starts = starts
    }

    @inlinable var sectionCount: Int { starts.count - 1 }
    @inlinable var rowCount: Int { starts[starts.count - 1] }

    /// The number of rows of each section.
    var counts: [Int] { (0..<sectionCount).map { starts[$0 + 1] - starts[$0] } }

    /// The flat indexes of the rows of `section`.
    @inlinable func rows(of section: Int) -> Range<Int> { starts[section]..<starts[section + 1] }

    /// The index path of the row at flat index `index` in `section`.
    func path(of index: Int, in section: Int) -> RowPath {
        RowPath(section: section, row: index - starts[section])
    }

    /// The index path of the row at flat index `index`.
    func path(of index: Int) -> RowPath {
        // The last section that starts at or before `index`: empty sections before it start
        // at the same offset, so the last one is the one that holds the row.
        var low = 0
        var high = sectionCount - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= index { low = middle } else { high = middle - 1 }
        }
        return path(of: index, in: low)
    }
}
