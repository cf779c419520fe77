extension JSONCollection {
    /// The compact JSON text of this collection as its elements stand in it now (after
    /// ``sorted(_:idKey:text:path:)``), written from `text`, the compact text its spans are
    /// in: a list's items joined into an array; each section's text with its items' array
    /// written again, the sections joined between what came before the first and after the
    /// last in `text`.
    public func text(from text: [UInt8]) -> [UInt8] {
        var written: [UInt8] = []
        written.reserveCapacity(text.count)
        switch self {
        case .list(let items):
            Self.join(items.lazy.map { text[$0.span] }, into: &written)
        case .sectioned(let sections):
            guard let first = sections.flat.headers.map(\.span.lowerBound).min(),
                  let last = sections.flat.headers.map(\.span.upperBound).max()
            else { return text }
            written.append(contentsOf: text[..<first])
            for (index, section) in sections.enumerated() {
                if index > 0 { written.append(UInt8(ascii: ",")) }
                let sectionText = text[section.header.span]
                guard let items = section.itemsArraySpan(in: text) else {
                    written.append(contentsOf: sectionText)
                    continue
                }
                written.append(contentsOf: text[sectionText.startIndex..<items.lowerBound])
                Self.join(section.items.lazy.map { text[$0.span] }, into: &written)
                written.append(contentsOf: text[items.upperBound..<sectionText.endIndex])
            }
            written.append(contentsOf: text[last...])
        }
        return written
    }

    /// `elements` as a JSON array.
    private static func join(_ elements: some Sequence<ArraySlice<UInt8>>, into written: inout [UInt8]) {
        written.append(UInt8(ascii: "["))
        for (index, element) in elements.enumerated() {
            if index > 0 { written.append(UInt8(ascii: ",")) }
            written.append(contentsOf: element)
        }
        written.append(UInt8(ascii: "]"))
    }
}
