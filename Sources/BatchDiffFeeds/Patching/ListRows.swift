import BatchDiffJSON

/// A list's rows as patches keep them from one to the next: their order, and the texts
/// they are read from.
struct ListRows {
    var order: RowOrder
    var texts: RowTexts

    /// The rows of `list`, a list's version (read whole).
    init(of list: Snapshot) {
        order = RowOrder(items: list.collection.rows)
        texts = RowTexts(list.bytes)
    }

    /// Bytes held, estimated (the version's text aside: its snapshot holds it too).
    var byteEstimate: Int { order.byteEstimate + texts.patchBytes }
}
