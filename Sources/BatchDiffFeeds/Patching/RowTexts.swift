/// The texts rows are read from (``RowOrder/TextLocation``): the version's an order was
/// built from, then each patch's.
struct RowTexts {
    private var texts: [[UInt8]]
    /// Bytes of the patches' texts held (the first text aside).
    private(set) var patchBytes = 0

    /// Texts starting with `text`, a version's.
    init(_ text: [UInt8]) {
        texts = [text]
    }

    /// Adds `text` (a patch's) as a text rows can be read from; its number.
    mutating func add(_ text: [UInt8]) -> Int32 {
        texts.append(text)
        patchBytes += text.count
        return Int32(texts.count - 1)
    }

    /// Adds `text`, one row's whole (a merged row's), and gives where the row now reads from.
    mutating func add(row text: [UInt8]) -> RowOrder.TextLocation {
        RowOrder.TextLocation(text: add(text), start: 0, count: Int32(text.count))
    }

    /// The text at `location`.
    subscript(location: RowOrder.TextLocation) -> ArraySlice<UInt8> {
        let start = Int(location.start)
        return texts[Int(location.text)][start..<start + Int(location.count)]
    }
}
