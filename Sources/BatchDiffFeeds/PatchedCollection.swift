import BatchDiffJSON

/// A sectioned feed's latest collection as a ``FeedPatch`` changes it: rows and sections in
/// linked lists, found by identity, each written from its text in the latest version or in
/// the patch; the new version is the text it writes, read again. (A list is patched in a
/// ``RowOrder``, in time proportional to the rows named: ``PatchedList``.)
struct PatchedCollection {
    /// Where a row's text is: in the latest version's text, or in the patch's.
    private struct Piece {
        let inPatch: Bool
        let span: Range<Int>
    }

    private struct Row {
        var text: Piece
        let identity: Fingerprint
        var content: Fingerprint
        var section: Int
    }

    private struct Section {
        /// The header: the section's text in the latest version around its `items` array,
        /// or a header an op gave (every member of its `item` but `items`).
        enum Header {
            case kept(prefix: Range<Int>, suffix: Range<Int>)
            case given(JSONValue)
        }

        var header: Header
        let identity: Fingerprint
        /// Where its identity member is written, for messages: the latest version's text of
        /// the section, or the header an op gave.
        let named: Named
        var rows = NodeLinks.Chain()

        enum Named {
            case kept(Range<Int>)
            case given(JSONValue)
        }
    }

    private var rows: [Row] = []
    private var rowLinks = NodeLinks()
    /// The rows of the identities the patch names (the only ones it looks for), and the
    /// rows it inserts.
    private var rowsByIdentity = NodesByIdentity()
    private var sections: [Section] = []
    private var sectionLinks = NodeLinks()
    private var sectionOrder = NodeLinks.Chain()
    private var sectionsByIdentity = NodesByIdentity()
    /// The latest version's text around its `sections` array.
    private let sectionsArray: (prefix: Range<Int>, suffix: Range<Int>)
    private let latestText: [UInt8]
    private let patchText: [UInt8]
    private let settings: FeedSettings
    /// The index of the op being applied, for refusals.
    private var opIndex = 0

    /// The collection of `latest`, a feed's latest version with `settings`, to be changed by
    /// `patch`.
    init(_ latest: Snapshot, settings: FeedSettings, patch: FeedPatch) throws(FeedError) {
        latestText = latest.bytes
        patchText = patch.text
        self.settings = settings
        let named = NamedIdentities(patch.rowIdentities(idKey: settings.idKey))
        guard case .sectioned(let all) = latest.collection else { throw .internalFailure("a list patched as a sectioned collection") }
        let text = latest.bytes
        guard let sectionsStart = all.first?.header.span.lowerBound ?? Self.emptyArray(in: text) else {
            throw .internalFailure("a sectioned version without its sections")
        }
        let sectionsEnd = all.last.map { $0.header.span.upperBound + 1 } ?? sectionsStart + 1
        sectionsArray = (0..<sectionsStart - 1, sectionsEnd..<text.count)
        for section in all {
            let span = section.header.span
            let items = try Self.itemsArray(of: section, in: text)
            let header = Section.Header.kept(prefix: span.lowerBound..<items.lowerBound, suffix: items.upperBound..<span.upperBound)
            let index = appendSection(header, section.header.identity, named: .kept(span))
            for item in section.items {
                appendRow(Piece(inPatch: false, span: item.span), item, to: index, indexed: named.contains(item.identity))
            }
        }
    }

    /// Where a section's `items` array stands in the compact `text`: right around its rows
    /// when it has some, else read from the section's own text.
    private static func itemsArray(of section: JSONSection, in text: [UInt8]) throws(FeedError) -> Range<Int> {
        if let first = section.items.first, let last = section.items.last { return first.span.lowerBound - 1..<last.span.upperBound + 1 }
        let span = section.header.span
        guard let value = try? JSONDocument(bytes: Array(text[span])).root.member(named: "items") else {
            throw .internalFailure("a section without its items")
        }
        return span.lowerBound + value.span.lowerBound..<span.lowerBound + value.span.upperBound
    }

    /// Where the empty `sections` array of the compact `text` stands (after its `[`).
    private static func emptyArray(in text: [UInt8]) -> Int? {
        guard let sections = try? JSONDocument(bytes: text).root.member(named: "sections") else { return nil }
        return sections.span.lowerBound + 1
    }

    /// Applies `patch`'s ops in order; ``FeedError/patchRefused(_:)`` for the first that
    /// cannot be applied (the collection is then to be dropped).
    mutating func apply(_ patch: FeedPatch) throws(FeedError) {
        for (index, op) in patch.ops.enumerated() {
            opIndex = index
            switch op {
            case .upsert(let item, let section, let position): try upsert(item, in: section, at: position)
            case .remove(let id, let section): try remove(id, from: section)
            case .move(let id, let section, let position): try move(id, to: section, at: position)
            case .upsertSection(let item, let position): try upsertSection(item, at: position)
            case .removeSection(let id): try removeSection(id)
            case .moveSection(let id, let position): try moveSection(id, at: position)
            }
        }
    }

    // MARK: Row ops

    private mutating func upsert(_ item: JSONValue, in sectionID: JSONValue?, at position: FeedPatch.Position?) throws(FeedError) {
        let section = try rowSection(sectionID)
        let identity = item.itemIdentity(idKey: settings.idKey)
        let piece = Piece(inPatch: true, span: item.span)
        if let row = try row(identity, named: item, in: section, required: false) {
            rows[row].text = piece
            rows[row].content = item.fingerprint
            if let position {
                rowLinks.remove(row, from: &sections[section].rows)
                try placeRow(row, in: section, at: position)
            }
            return
        }
        if settings.uniqueIdentities, let other = rowsByIdentity.nodes(identity, upTo: 1).first {
            throw refused(.duplicateIdentity, "the feed keeps its identities unique; \(FeedPatch.describe(item)) would repeat the identity of a row\(sectionName(rows[other].section))")
        }
        let row = appendRow(piece, JSONItem(identity: identity, content: item.fingerprint, span: 0..<0), to: section)
        rowLinks.remove(row, from: &sections[section].rows)
        try placeRow(row, in: section, at: position ?? .end)
    }

    private mutating func remove(_ id: JSONValue, from sectionID: JSONValue?) throws(FeedError) {
        let section = try rowSection(sectionID)
        guard let row = try row(id.fingerprint, named: id, in: section, required: true) else { return }
        rowLinks.remove(row, from: &sections[section].rows)
        rowsByIdentity.remove(row, rows[row].identity)
    }

    private mutating func move(_ id: JSONValue, to sectionID: JSONValue?, at position: FeedPatch.Position) throws(FeedError) {
        let section = try rowSection(sectionID)
        // Found in any section: the op names where it goes.
        guard let row = try row(id.fingerprint, named: id, in: nil, required: true) else { return }
        rowLinks.remove(row, from: &sections[rows[row].section].rows)
        rows[row].section = section
        try placeRow(row, in: section, at: position)
    }

    /// The section a row op works in: the one its `section` names.
    private func rowSection(_ sectionID: JSONValue?) throws(FeedError) -> Int {
        guard let sectionID else { throw refused(.invalidShape, "a row op on a sectioned feed names its \"section\"") }
        return try section(sectionID)
    }

    /// The row of `identity` (`named` in messages), in `section` or in any: `nil` when
    /// there is none and none is `required`; an identity that repeats in the feed (in any
    /// sections) is refused.
    private func row(_ identity: Fingerprint, named name: JSONValue, in section: Int?, required: Bool) throws(FeedError) -> Int? {
        let rows = rowsByIdentity.nodes(identity, upTo: 2)
        guard rows.count <= 1 else {
            throw refused(.duplicateIdentity, "the identity \(FeedPatch.describe(name)) repeats in the feed; an op cannot name it")
        }
        let found = rows.filter { section == nil || self.rows[$0].section == section }
        if found.isEmpty && required {
            throw refused(.identityNotFound, "the feed has no row \(FeedPatch.describe(name))\(section.map(sectionName) ?? "")")
        }
        return found.first
    }

    /// Links `row` (in no chain) into `section` at `position`.
    private mutating func placeRow(_ row: Int, in section: Int, at position: FeedPatch.Position) throws(FeedError) {
        let successor: Int?
        switch position {
        case .start: successor = sections[section].rows.first >= 0 ? sections[section].rows.first : nil
        case .end: successor = nil
        case .before(let anchor): successor = try rowAnchor(anchor, in: section, besides: row)
        case .after(let anchor): successor = rowLinks.successor(of: try rowAnchor(anchor, in: section, besides: row))
        }
        rowLinks.insert(row, into: &sections[section].rows, before: successor)
    }

    private func rowAnchor(_ anchor: JSONValue, in section: Int, besides row: Int) throws(FeedError) -> Int {
        let found = rowsByIdentity.nodes(anchor.fingerprint, upTo: 3).filter { $0 != row }
        guard found.count <= 1 else {
            throw refused(.duplicateIdentity, "the anchor \(FeedPatch.describe(anchor)) repeats in the feed; an op cannot name it")
        }
        guard let found = found.first, rows[found].section == section else {
            let itself = anchor.fingerprint == rows[row].identity ? " (a row cannot stand beside itself)" : ""
            throw refused(.anchorNotFound, "no row \(FeedPatch.describe(anchor)) to stand beside\(sectionName(section))\(itself)")
        }
        return found
    }

    /// Adds a row of `element`'s identity and content, its text `text`, at the end of
    /// `section`, found by identity when `indexed` (a row the patch names, or inserts).
    @discardableResult
    private mutating func appendRow(_ text: Piece, _ element: JSONItem, to section: Int, indexed: Bool = true) -> Int {
        rows.append(Row(text: text, identity: element.identity, content: element.content, section: section))
        let row = rowLinks.add()
        rowLinks.insert(row, into: &sections[section].rows, before: nil)
        if indexed { rowsByIdentity.add(row, element.identity) }
        return row
    }

    // MARK: Section ops

    private mutating func upsertSection(_ item: JSONValue, at position: FeedPatch.Position?) throws(FeedError) {
        let identity = item.sectionIdentity(idKey: settings.idKey)
        let items = item.member(named: "items")
        if let section = try sectionNamed(identity, item, required: false) {
            guard items == nil else {
                throw refused(.invalidShape, "section \(FeedPatch.describe(item)) exists: upsertSection changes its header only, and may not carry \"items\" (row ops change them)")
            }
            sections[section].header = .given(item)
            if let position {
                sectionLinks.remove(section, from: &sectionOrder)
                try placeSection(section, at: position)
            }
            return
        }
        guard items == nil || items!.isArray else { throw refused(.invalidShape, "a new section's \"items\" is an array, not \(items!.kindName)") }
        let section = appendSection(.given(item), identity, named: .given(item))
        sectionLinks.remove(section, from: &sectionOrder)
        try placeSection(section, at: position ?? .end)
        for row in items?.elements ?? [] {
            let rowIdentity = row.itemIdentity(idKey: settings.idKey)
            if settings.uniqueIdentities && !rowsByIdentity.nodes(rowIdentity, upTo: 1).isEmpty {
                throw refused(.duplicateIdentity, "the feed keeps its identities unique; the row \(FeedPatch.describe(row)) of the new section would repeat one")
            }
            appendRow(Piece(inPatch: true, span: row.span), JSONItem(identity: rowIdentity, content: row.fingerprint, span: 0..<0), to: section)
        }
    }

    private mutating func removeSection(_ id: JSONValue) throws(FeedError) {
        guard let section = try sectionNamed(id.fingerprint, id, required: true) else { return }
        sectionLinks.remove(section, from: &sectionOrder)
        sectionsByIdentity.remove(section, sections[section].identity)
        for row in rowLinks.nodes(of: sections[section].rows) { rowsByIdentity.remove(row, rows[row].identity) }
    }

    private mutating func moveSection(_ id: JSONValue, at position: FeedPatch.Position) throws(FeedError) {
        guard let section = try sectionNamed(id.fingerprint, id, required: true) else { return }
        sectionLinks.remove(section, from: &sectionOrder)
        try placeSection(section, at: position)
    }

    /// The section a row op's `section` names.
    private func section(_ id: JSONValue) throws(FeedError) -> Int {
        guard let section = try sectionNamed(id.fingerprint, id, required: true) else { throw .internalFailure("a required section") }
        return section
    }

    /// The section of `identity` (`named` in messages); a repeated one is refused.
    private func sectionNamed(_ identity: Fingerprint, _ name: JSONValue, required: Bool) throws(FeedError) -> Int? {
        let found = sectionsByIdentity.nodes(identity, upTo: 2)
        guard found.count <= 1 else { throw refused(.duplicateIdentity, "the section identity \(FeedPatch.describe(name)) repeats in the feed; an op cannot name it") }
        if found.isEmpty && required { throw refused(.identityNotFound, "the feed has no section \(FeedPatch.describe(name))") }
        return found.first
    }

    private mutating func placeSection(_ section: Int, at position: FeedPatch.Position) throws(FeedError) {
        let successor: Int?
        switch position {
        case .start: successor = sectionOrder.first >= 0 ? sectionOrder.first : nil
        case .end: successor = nil
        case .before(let anchor): successor = try sectionAnchor(anchor, besides: section)
        case .after(let anchor): successor = sectionLinks.successor(of: try sectionAnchor(anchor, besides: section))
        }
        sectionLinks.insert(section, into: &sectionOrder, before: successor)
    }

    private func sectionAnchor(_ anchor: JSONValue, besides section: Int) throws(FeedError) -> Int {
        let found = sectionsByIdentity.nodes(anchor.fingerprint, upTo: 3).filter { $0 != section }
        guard found.count <= 1 else { throw refused(.duplicateIdentity, "the anchor section \(FeedPatch.describe(anchor)) repeats; an op cannot name it") }
        guard let found = found.first else {
            let itself = anchor.fingerprint == sections[section].identity ? " (a section cannot stand beside itself)" : ""
            throw refused(.anchorNotFound, "no section \(FeedPatch.describe(anchor)) to stand beside\(itself)")
        }
        return found
    }

    private mutating func appendSection(_ header: Section.Header, _ identity: Fingerprint, named: Section.Named) -> Int {
        sections.append(Section(header: header, identity: identity, named: named))
        let section = sectionLinks.add()
        sectionLinks.insert(section, into: &sectionOrder, before: nil)
        sectionsByIdentity.add(section, identity)
        return section
    }

    // MARK: Writing

    /// The new version: its text, read again.
    func snapshot() throws(FeedError) -> Snapshot {
        return try Snapshot(document: Snapshot.document(self.text(), idKey: settings.idKey), idKey: settings.idKey)
    }

    /// The collection's JSON text.
    func text() -> [UInt8] {
        var text: [UInt8] = []
        text.reserveCapacity(latestText.count + patchText.count)
        text += latestText[sectionsArray.prefix]
        text.append(UInt8(ascii: "["))
        for (position, section) in sectionLinks.nodes(of: sectionOrder).enumerated() {
            if position > 0 { text.append(UInt8(ascii: ",")) }
            switch sections[section].header {
            case .kept(let prefix, let suffix):
                text += latestText[prefix]
                writeRows(of: section, into: &text)
                text += latestText[suffix]
            case .given(let item):
                text.append(UInt8(ascii: "{"))
                for (key, value) in item.members where key.string != "items" {
                    text += key.text
                    text.append(UInt8(ascii: ":"))
                    text += value.text
                    text.append(UInt8(ascii: ","))
                }
                text += Array(#""items":"#.utf8)
                writeRows(of: section, into: &text)
                text.append(UInt8(ascii: "}"))
            }
        }
        text.append(UInt8(ascii: "]"))
        text += latestText[sectionsArray.suffix]
        return text
    }

    /// Writes the rows of `section` as a JSON array into `text`.
    private func writeRows(of section: Int, into text: inout [UInt8]) {
        text.append(UInt8(ascii: "["))
        for (position, row) in rowLinks.nodes(of: sections[section].rows).enumerated() {
            if position > 0 { text.append(UInt8(ascii: ",")) }
            let piece = rows[row].text
            text += piece.inPatch ? patchText[piece.span] : latestText[piece.span]
        }
        text.append(UInt8(ascii: "]"))
    }

    // MARK: Messages

    private func refused(_ reason: PatchRefusal.Reason, _ detail: String) -> FeedError {
        .patchRefused(PatchRefusal(reason, op: opIndex, detail))
    }

    /// " in section <identity>".
    private func sectionName(_ section: Int) -> String {
        let value: JSONValue? = switch sections[section].named {
        case .kept(let span): try? JSONDocument(bytes: Array(latestText[span])).root
        case .given(let item): item
        }
        return " in section " + (value.map { FeedPatch.describe($0.member(named: settings.idKey) ?? $0) } ?? "?")
    }
}
