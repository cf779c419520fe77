/// The feeds of a store by id, and their ids in order, so a page of the listing is found by
/// a binary search instead of a sort of every feed.
struct FeedIndex<Feed> {
    private(set) var byID: [FeedID: Feed] = [:]
    /// Every id of `byID`, ascending.
    private var ids: [FeedID] = []

    subscript(id: FeedID) -> Feed? { byID[id] }

    /// The number of feeds.
    var count: Int { byID.count }

    /// Adds `feed` as `id` unless there is one; returns whether it was added.
    mutating func insert(_ feed: Feed, as id: FeedID) -> Bool {
        guard byID[id] == nil else { return false }
        byID[id] = feed
        ids.insert(id, at: position(above: id.name, orAt: true))
        return true
    }

    /// Removes and returns the feed `id`.
    mutating func remove(_ id: FeedID) -> Feed? {
        guard let feed = byID.removeValue(forKey: id) else { return nil }
        ids.remove(at: position(above: id.name, orAt: true))
        return feed
    }

    /// Up to `limit` ids after `after` (from the first when `nil`) that begin with
    /// `prefix`, in order, and whether more follow.
    func page(after: FeedID?, prefix: String, limit: Int) -> (ids: ArraySlice<FeedID>, more: Bool) {
        let start = max(after.map { position(above: $0.name, orAt: false) } ?? 0, position(above: prefix, orAt: true))
        let rangeEnd = FeedID.rangeEnd(ofPrefix: prefix).map { position(above: $0, orAt: true) } ?? ids.count
        let end = max(start, min(start + limit, rangeEnd))
        return (ids[start..<end], end < rangeEnd)
    }

    /// The first position of `ids` holding an id above `bound`, or at it when `orAt`, by
    /// UTF-8 bytes (as the durable stores' indexes compare; `String`'s order is Unicode's).
    private func position(above bound: String, orAt: Bool) -> Int {
        var low = 0
        var high = ids.count
        while low < high {
            let middle = (low + high) / 2
            let id = ids[middle].name.utf8
            if id.lexicographicallyPrecedes(bound.utf8) || (!orAt && id.elementsEqual(bound.utf8)) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
