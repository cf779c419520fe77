import BatchDiffJSON

/// Where the rows (or sections) of a sorted feed go: each after every one that does not come
/// after it in the feed's order (``SortPlace``), found down the counted order
/// (``RowOrder/partitionPoint(_:)``) with the keys of the rows on the way read from their
/// texts: time proportional to a logarithm of the feed's size, nothing kept beside the rows.
struct KeyPlacement {
    let reader: SortPlace.Reader
    /// How a refusal names the order: `orderBy=-score` or `sectionOrderBy=rank`.
    let name: String

    /// The placement of rows in `order` (named `parameter` in refusals), in a feed whose
    /// identity member is `idKey`.
    init(_ order: SortOrder, parameter: String, idKey: String) {
        reader = SortPlace.Reader(order: order, idKey: idKey)
        name = "\(parameter)=\(order)"
    }

    /// The place of the element (a row, a section's header) whose text `text` op `op` gives,
    /// `named` in refusals; ``PatchRefusal/Reason/invalidSortKey`` when its key does not sort.
    func place(of text: ArraySlice<UInt8>, named: String, op: Int) throws(FeedError) -> SortPlace {
        do throws(SortKeyError) {
            return try reader.place(of: text)
        } catch {
            throw .patchRefused(PatchRefusal(.invalidSortKey, op: op, "\(named): \(error)"))
        }
    }

    /// The position at which an element of `place` goes among those of `order`, whose texts
    /// `text` gives (the element itself in no position).
    func position(of place: SortPlace, among order: RowOrder, text: (Int32) -> ArraySlice<UInt8>) throws(FeedError) -> Int {
        try order.partitionPoint { (node) throws(FeedError) -> Bool in
            do throws(SortKeyError) {
                return reader.compare(try reader.place(of: text(node)), place) > 0
            } catch {
                throw .internalFailure("a row of a feed sorted by \(name) whose key does not sort: \(error)")
            }
        }
    }

    /// The refusal of an op that would put an element at a position of its choosing: `what`
    /// names it.
    func positionRefused(_ what: String, op: Int) -> FeedError {
        .patchRefused(PatchRefusal(.invalidShape, op: op, "the feed is sorted (\(name)): \(what); an element goes where its keys put it"))
    }
}
