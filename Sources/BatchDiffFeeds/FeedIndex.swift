/// The feeds of a store by id, and their ids in order, so a page of the listing is found by
/// a binary search instead of a sort of every feed.
struct FeedIndex<Feed> {
    private(set) var byID: [FeedID: Feed] = [:]
    /// Every id of `byID`, ascending.
    private var ids: [FeedID] = []

    subscript(id: FeedID) -> Feed? { byID[id] }

    /// Adds `feed` as `id` unless there is one; returns whether it was added.
    mutating func insert(_ feed: Feed, as id: FeedID) -> Bool {
        guard byID[id] == nil else { return false }
        byID[id] = feed
        ids.insert(id, at: position(after: nil, of: id))
        return true
    }

    /// Removes and returns the feed `id`.
    mutating func remove(_ id: FeedID) -> Feed? {
        guard let feed = byID.removeValue(forKey: id) else { return nil }
        ids.remove(at: position(after: nil, of: id))
        return feed
    }

    /// Up to `limit` ids after `after` (from the first when `nil`), in order, and whether
    /// more follow.
    func page(after: FeedID?, limit: Int) -> (ids: ArraySlice<FeedID>, more: Bool) {
        let start = after.map { position(after: $0, of: $0) } ?? 0
        let end = min(start + limit, ids.count)
        return (ids[start..<end], end < ids.count)
    }

    /// The first position of `ids` holding an id above `bound` (`after` given), or not below
    /// it (`after` nil).
    private func position(after: FeedID?, of bound: FeedID) -> Int {
        var low = 0
        var high = ids.count
        while low < high {
            let middle = (low + high) / 2
            if ids[middle] < bound || (after != nil && ids[middle] == bound) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
