import BatchDiffJSON

/// A sectioned collection as patches keep it from one to the next: its sections in a counted
/// order (``RowOrder``, each section weighing its whole text), each section's header text
/// around its `items` array and its rows in an order of their own, the texts rows are read
/// from, and every row identity's count, with a section that has it.
struct SectionedRows {
    /// One section: its text before and after its `items` array, and its rows.
    struct Section {
        /// The section's text up to its `items` array (without the `[`), and after it.
        var prefix: ArraySlice<UInt8>
        var suffix: ArraySlice<UInt8>
        var rows: RowOrder

        /// The length of the section's compact text.
        var textCount: Int { prefix.count + rows.textCount + suffix.count }
    }

    /// The sections; each node's text location counts the section's whole text.
    private(set) var order: RowOrder
    /// Each section by its node in `order` (`nil`: removed).
    private var sections: [Section?]
    var texts: RowTexts
    /// The collection's text before and after its `sections` array (without its brackets).
    let outer: (prefix: ArraySlice<UInt8>, suffix: ArraySlice<UInt8>)
    /// Every row identity: how many rows have it, and a section one of them is in (the one,
    /// when there is one).
    private var rowIdentities: [Fingerprint: (section: Int32, count: Int32)] = [:]
    /// For an identity of more than one row, how many of them each section holds (so that
    /// when one is left, its section is known without looking through every section).
    private var repeatedIdentitySections: [Fingerprint: [Int32: Int32]] = [:]
    private(set) var rowCount = 0

    /// The sections of `snapshot`, a sectioned version (read whole).
    init(of snapshot: Snapshot) throws(FeedError) {
        guard case .sectioned(let all) = snapshot.collection else { throw .internalFailure("a list patched as sections") }
        let text = snapshot.bytes
        texts = RowTexts(text)
        guard let start = all.first?.header.span.lowerBound ?? Self.emptyArray(in: text) else {
            throw .internalFailure("a sectioned version without its sections")
        }
        let end = all.last.map { $0.header.span.upperBound + 1 } ?? start + 1
        outer = (text[0..<start - 1], text[end..<text.count])
        sections = []
        sections.reserveCapacity(all.count)
        order = RowOrder(items: all.map(\.header))
        for section in all {
            let span = section.header.span
            guard let items = section.itemsArraySpan(in: text) else { throw .internalFailure("a section without its items") }
            let node = Int32(sections.count)
            sections.append(Section(prefix: text[span.lowerBound..<items.lowerBound], suffix: text[items.upperBound..<span.upperBound], rows: RowOrder(items: section.items)))
            for item in section.items { count(item.identity, in: node, by: 1) }
        }
    }

    /// Where the empty `sections` array of the compact `text` stands (after its `[`).
    private static func emptyArray(in text: [UInt8]) -> Int? {
        guard let sections = try? JSONDocument(bytes: text).root.member(named: "sections") else { return nil }
        return sections.span.lowerBound + 1
    }

    // MARK: Reading

    /// The length of the collection's compact text.
    var textCount: Int { outer.prefix.count + order.textCount + outer.suffix.count }

    /// The section at node `node`.
    subscript(node: Int32) -> Section { sections[Int(node)]! }

    /// Where section `node`'s text starts in the collection's text.
    func offset(of node: Int32) -> Int { outer.prefix.count + order.offset(of: order.position(of: node)) }

    /// What the collection holds of a row identity.
    enum RowLookup: Equatable {
        case none
        case repeated
        case row(section: Int32, row: Int32)
    }

    /// The row of `identity`, and its section.
    func row(_ identity: Fingerprint) -> RowLookup {
        guard let found = rowIdentities[identity] else { return .none }
        guard found.count == 1 else { return .repeated }
        guard let rows = sections[Int(found.section)]?.rows, case .row(let row) = rows.row(identity) else { return .none }
        return .row(section: found.section, row: row)
    }

    /// How many rows have `identity`, and a section one of them is in.
    func rowIdentity(_ identity: Fingerprint) -> (section: Int32, count: Int32)? { rowIdentities[identity] }

    /// The header of section `node` as a JSON document: its text with its `items` empty.
    func headerText(of node: Int32) -> [UInt8] {
        let section = self[node]
        return Array(section.prefix) + Array("[]".utf8) + Array(section.suffix)
    }

    /// The collection's text with only the sections whose texts are `sections` (a page's, a
    /// window's).
    func text(withSections sections: [ArraySlice<UInt8>]) -> [UInt8] {
        var text = Array(outer.prefix)
        text.append(UInt8(ascii: "["))
        for (index, section) in sections.enumerated() {
            if index > 0 { text.append(UInt8(ascii: ",")) }
            text += section
        }
        text.append(UInt8(ascii: "]"))
        text += outer.suffix
        return text
    }

    /// Section `node`'s whole compact text (time proportional to its length).
    func text(of node: Int32) -> [UInt8] {
        let section = self[node]
        var text = Array(section.prefix)
        text.reserveCapacity(section.textCount)
        text.append(UInt8(ascii: "["))
        for (index, row) in section.rows.rowsInOrder().enumerated() {
            if index > 0 { text.append(UInt8(ascii: ",")) }
            text += texts[section.rows.location(of: row)]
        }
        text.append(UInt8(ascii: "]"))
        text += section.suffix
        return text
    }

    // MARK: Changing

    /// Changes section `node`'s rows by `change`, and its length in the order after.
    mutating func changeRows<Result>(of node: Int32, _ change: (inout RowOrder) -> Result) -> Result {
        var section = sections[Int(node)].take()!
        let result = change(&section.rows)
        sections[Int(node)] = section
        resize(node)
        return result
    }

    /// Gives section `node` the header `prefix`/`suffix` of content `content`.
    mutating func setHeader(of node: Int32, prefix: ArraySlice<UInt8>, suffix: ArraySlice<UInt8>, content: Fingerprint) {
        sections[Int(node)]!.prefix = prefix
        sections[Int(node)]!.suffix = suffix
        order.change(node, content: content, location: textLocation(of: node))
    }

    /// Counts `by` more rows of `identity` in `section` (fewer when negative).
    mutating func count(_ identity: Fingerprint, in section: Int32, by delta: Int32) {
        let found = rowIdentities[identity]
        let count = (found?.count ?? 0) + delta
        rowCount += Int(delta)
        guard count > 0 else {
            rowIdentities[identity] = nil
            repeatedIdentitySections[identity] = nil
            return
        }
        guard let found, count > 1 || found.count > 1 else {
            rowIdentities[identity] = (section, count)
            return
        }
        var perSection = repeatedIdentitySections.removeValue(forKey: identity) ?? [found.section: found.count]
        perSection[section, default: 0] += delta
        if perSection[section] == 0 { perSection[section] = nil }
        rowIdentities[identity] = (perSection[section] != nil ? section : perSection.first?.key ?? section, count)
        if count > 1 { repeatedIdentitySections[identity] = perSection }
    }

    /// A new section of `identity`, header `prefix`/`suffix` and content `content`, with no
    /// rows, in no position yet (``place(_:at:)``).
    mutating func newSection(identity: Fingerprint, content: Fingerprint, prefix: ArraySlice<UInt8>, suffix: ArraySlice<UInt8>) -> Int32 {
        let section = Section(prefix: prefix, suffix: suffix, rows: RowOrder(items: [JSONItem]()))
        let location = RowOrder.TextLocation(text: 0, start: 0, count: Int32(section.textCount))
        let node = order.newRow(identity: identity, content: content, location: location)
        if Int(node) >= sections.count { sections.append(contentsOf: repeatElement(nil, count: Int(node) + 1 - sections.count)) }
        sections[Int(node)] = section
        return node
    }

    /// Puts section `node`, in no position, at `position`.
    mutating func place(_ node: Int32, at position: Int) { order.insert(node, at: position) }

    /// Takes section `node` out of its position.
    mutating func detach(_ node: Int32) { order.detach(node) }

    /// Removes section `node` and its rows; the section as it was.
    mutating func removeSection(_ node: Int32) -> Section {
        let section = sections[Int(node)].take()!
        order.remove(node)
        for row in section.rows.rowsInOrder() { count(section.rows.identity(of: row), in: node, by: -1) }
        return section
    }

    private func textLocation(of node: Int32) -> RowOrder.TextLocation {
        RowOrder.TextLocation(text: 0, start: 0, count: Int32(sections[Int(node)]!.textCount))
    }

    /// Brings section `node`'s length in the order up to date.
    private mutating func resize(_ node: Int32) {
        order.change(node, content: order.placed(node).content, location: textLocation(of: node))
    }

    /// Bytes held, estimated (the version's text aside: its snapshot holds it too).
    var byteEstimate: Int {
        order.byteEstimate + sections.capacity * MemoryLayout<Section?>.stride + rowCount * RowOrder.bytesPerRow + texts.patchBytes
    }
}

extension JSONValue {
    /// This section's header as a ``SectionedRows/Section`` holds it: its text before its
    /// `items` array (every member but `items`, as sent, then `"items":`) and after it.
    var sectionHeader: (prefix: ArraySlice<UInt8>, suffix: ArraySlice<UInt8>) {
        var prefix: [UInt8] = [UInt8(ascii: "{")]
        for (key, value) in members where key.string != "items" {
            prefix += key.text
            prefix.append(UInt8(ascii: ":"))
            prefix += value.text
            prefix.append(UInt8(ascii: ","))
        }
        prefix += Array(#""items":"#.utf8)
        return (prefix[...], [UInt8(ascii: "}")][...])
    }
}
