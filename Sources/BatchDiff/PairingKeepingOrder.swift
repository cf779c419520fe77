/// How the rows of a pair of sections are paired for a batch without moves.
///
/// Without moves, a paired row that does not keep its order is deleted and inserted like an
/// unpaired one: only the rows that stay in place count. Repeats paired in order of
/// appearance may cross where another choice would not: `[a, b, a]` to `[b, a]` pairs the
/// first `a`, which cannot stay with `b`; pairing the second keeps both in place (the first,
/// left over, may still pair with an `a` of another section: deleted either way). So the rows
/// are paired as a longest common subsequence of their identities pairs them, and the rest in
/// order of appearance. The subsequence is found as Hunt and Szymanski find it: a longest increasing
/// subsequence of the old rows that match each new row, from the last back; only between the
/// common front and back, which some longest common subsequence keeps whole.
extension Pairing {
    /// How many old rows of one identity a new row is matched with at most. An identity that
    /// repeats more often between the common front and back of an old section pairs its rows
    /// in order of appearance: the matches stay within this many a new row, and the search
    /// within O(n log n).
    @usableFromInline static let matchesPerRow = 8

    /// Pairs the still unpaired rows `old[oldRows]` and `new[newRows]`, the rows of a pair of
    /// sections, so that as many pairs keep their order as a longest common subsequence of
    /// their identities allows; the rest in order of appearance.
    ///
    /// The rows are paired in order of appearance first, and stay so unless another pairing
    /// keeps more in order: when the pairs keep their order, as they usually do, none does,
    /// and nothing else is read.
    @inlinable
    mutating func pairKeepingOrder<Elements: DiffableElements>(
        old: Elements, _ oldRows: Range<Int>, new: Elements, _ newRows: Range<Int>
    ) {
        pair(old: old, oldRows, new: new, newRows)
        guard !keepsOrder(new: newRows) else { return }
        let ends = Self.commonEnds(old: old, oldRows, new: new, newRows)
        let matches = matches(old: old, ends.middle(of: oldRows), new: new, ends.middle(of: newRows))
        guard pairAlongLongestRun(of: matches, oldRows, newRows, ends: ends) else { return }
        pair(old: old, oldRows, new: new, newRows)
    }

    /// Whether the paired rows of `newRows` have their partners in increasing order.
    @usableFromInline
    func keepsOrder(new newRows: Range<Int>) -> Bool {
        var last = -1
        for newIndex in newRows {
            guard let oldIndex = partner(ofNew: newIndex) else { continue }
            guard oldIndex > last else { return false }
            last = oldIndex
        }
        return true
    }

    /// How many rows at the front of `old[oldRows]` and `new[newRows]` have the same
    /// identities, one for one, and how many at the back after those.
    @inlinable
    static func commonEnds<Elements: DiffableElements>(
        old: Elements, _ oldRows: Range<Int>, new: Elements, _ newRows: Range<Int>
    ) -> Ends {
        let shorter = min(oldRows.count, newRows.count)
        var ends = Ends(front: 0, back: 0)
        while ends.front < shorter, old.hasIdentity(at: oldRows.lowerBound + ends.front, of: newRows.lowerBound + ends.front, in: new) {
            ends.front += 1
        }
        while ends.back < shorter - ends.front,
              old.hasIdentity(at: oldRows.upperBound - 1 - ends.back, of: newRows.upperBound - 1 - ends.back, in: new) {
            ends.back += 1
        }
        return ends
    }

    /// Each row of `new[newRows]`, in order, with the rows of `old[oldRows]` of its identity,
    /// from the last back; with its partner alone, if that lies in `oldRows`, when its identity
    /// repeats more than ``matchesPerRow`` times there. Every pair within them is a match.
    @inlinable
    func matches<Elements: DiffableElements>(
        old: Elements, _ oldRows: Range<Int>, new: Elements, _ newRows: Range<Int>
    ) -> Matches {
        var matches = Matches()
        guard !oldRows.isEmpty, !newRows.isEmpty else { return matches }
        var table = IdentityTable(capacityFor: oldRows.count)
        // For each old row, the one before it with the same identity (or -1), how many there
        // are up to it, and whether one comes after it: pushed from the front, each chain runs
        // from the last back.
        var links = [Link](filling: Link(), count: oldRows.count)
        for oldIndex in oldRows {
            let previous = table.push(oldIndex, hash: old.identityHash(at: oldIndex), of: old)
            guard previous >= 0 else { continue }
            links[Int(previous) - oldRows.lowerBound].isLast = false
            links[oldIndex - oldRows.lowerBound] = Link(previous: previous, count: links[Int(previous) - oldRows.lowerBound].count + 1)
        }
        for newIndex in newRows {
            // A row paired with the only old row of its identity has no other match: it is
            // neither hashed nor looked up (most rows, when no identity repeats).
            if let partner = partner(ofNew: newIndex), oldRows.contains(partner),
               case let link = links[partner - oldRows.lowerBound], link.count == 1, link.isLast {
                matches.append(old: partner, new: newIndex)
                continue
            }
            guard let (last, _) = table.head(of: newIndex, of: new, hash: new.identityHash(at: newIndex), in: old) else { continue }
            guard links[Int(last) - oldRows.lowerBound].count <= Self.matchesPerRow else {
                if let partner = partner(ofNew: newIndex), oldRows.contains(partner) { matches.append(old: partner, new: newIndex) }
                continue
            }
            var oldIndex = Int(last)
            while oldIndex >= 0 {
                matches.append(old: oldIndex, new: newIndex)
                oldIndex = Int(links[oldIndex - oldRows.lowerBound].previous)
            }
        }
        return matches
    }

    /// Pairs the rows of `oldRows` and `newRows` anew when that keeps more pairs in order:
    /// their common `ends` in place, and between them those of a longest run of `matches`
    /// whose old rows increase. Returns whether it did.
    @usableFromInline
    mutating func pairAlongLongestRun(of matches: Matches, _ oldRows: Range<Int>, _ newRows: Range<Int>, ends: Ends) -> Bool {
        let inPlace = ends.rowsInPlace(oldRows, newRows)
        let (oldMiddle, newMiddle) = (ends.middle(of: oldRows), ends.middle(of: newRows))
        // Nothing else to choose (no identity repeats between the ends): each match is a pair.
        if matches.old.count == oldMiddle.count(where: { partner(ofOld: $0).map(newMiddle.contains) ?? false }),
           inPlace.allSatisfy({ partner(ofOld: $0.old) == $0.new }) {
            return false
        }
        let stays = longestIncreasingSubsequence(matches.old)
        guard ends.front + ends.back + stays.count(where: { $0 }) > keptInPlace(oldRows, newRows) else { return false }
        for oldIndex in oldRows { unpair(old: oldIndex) }
        for rows in inPlace { pair(old: rows.old, new: rows.new) }
        for (match, stays) in stays.enumerated() where stays {
            pair(old: matches.old[match], new: matches.new[match])
        }
        return true
    }

    /// How many of the pairs of `newRows` with `oldRows` keep their order: a longest run of them.
    func keptInPlace(_ oldRows: Range<Int>, _ newRows: Range<Int>) -> Int {
        let partners = newRows.compactMap { partner(ofNew: $0).flatMap { oldRows.contains($0) ? $0 : nil } }
        return longestIncreasingSubsequence(partners).count { $0 }
    }

    /// How many rows two sections have in common at the front and at the back.
    @usableFromInline
    struct Ends {
        @usableFromInline var front: Int
        @usableFromInline var back: Int

        @inlinable
        init(front: Int, back: Int) {
            self.front = front
            self.back = back
        }

        /// The rows of a section between its common front and back.
        @inlinable
        func middle(of rows: Range<Int>) -> Range<Int> { rows.lowerBound + front..<rows.upperBound - back }

        /// The rows of the common front and back, each old one with its new one.
        func rowsInPlace(_ oldRows: Range<Int>, _ newRows: Range<Int>) -> some Sequence<(old: Int, new: Int)> {
            let front = (0..<front).lazy.map { (old: oldRows.lowerBound + $0, new: newRows.lowerBound + $0) }
            let back = (1..<back + 1).lazy.map { (old: oldRows.upperBound - $0, new: newRows.upperBound - $0) }
            return [front, back].joined()
        }
    }

    /// An old row among the others of its identity.
    @usableFromInline
    struct Link {
        /// The row of the same identity before it, or -1.
        @usableFromInline var previous: Int32 = -1
        /// How many rows of its identity there are up to it, itself included.
        @usableFromInline var count: Int32 = 1
        /// Whether no row of its identity comes after it.
        @usableFromInline var isLast = true

        @inlinable init() {}

        @inlinable
        init(previous: Int32, count: Int32) {
            self.previous = previous
            self.count = count
        }
    }

    /// Pairs of an old and a new row of the same identity, in two columns.
    @usableFromInline
    struct Matches {
        @usableFromInline var old: [Int] = []
        @usableFromInline var new: [Int] = []

        @inlinable init() {}

        @inlinable
        mutating func append(old oldIndex: Int, new newIndex: Int) {
            old.append(oldIndex)
            new.append(newIndex)
        }
    }
}
