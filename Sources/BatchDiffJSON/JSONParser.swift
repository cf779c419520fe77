/// A one-pass JSON parser that builds the tape of a ``JSONDocument``: it validates the text
/// (RFC 8259, UTF-8), limits nesting, and fingerprints every value's canonical form.
///
/// Given where the document's collections are, it reads their items as it goes (the
/// collection reader's rules, docs/batch-format.md §1) and takes each item's values off the
/// tape again, so the tape stays as small as the largest item.
struct JSONParser: ~Copyable {
    /// What a value is to the collections being read as they are parsed.
    private enum Role {
        case plain
        /// The root object, whose members named by `collectionMembers` are collections.
        case envelope
        /// A collection: an array of items, or an object whose first `sections` member holds the sections.
        case collection
        /// The array of a collection's sections.
        case sections
        /// A section, whose first `items` member holds its items.
        case section
        /// The array of a collection's items.
        case items
    }

    let input: UnsafeBufferPointer<UInt8>
    var position = 0
    private var nodes: [JSONNode] = []
    var scratch: [UInt8] = []
    private let maxDepth: Int
    /// The collections' identity member, and the root members that are collections.
    private let idKey: Fingerprint
    private let collectionMembers: [Fingerprint]
    /// The rows read as they are parsed: a list's items, or the items of every section of a
    /// sectioned collection, one after the other.
    private var rowStores: [JSONItems] = []
    /// Each items array read as it was parsed: where its rows are.
    private var extracted: [ExtractedArray] = []
    /// While a collection's sections are parsed: the store their items go to, and where
    /// their array starts.
    private var sectionStore: (index: Int, start: Int)?
    /// Whether whitespace was skipped between tokens (the text is not compact).
    private var skippedWhitespace = false
    /// Whether an object naming a member twice is an error (``checkDistinctMembers(of:count:)``).
    private var refusesRepeatedMembers = false

    private init(input: UnsafeBufferPointer<UInt8>, maxDepth: Int, idKey: Fingerprint = Fingerprint(high: 0, low: 0),
                 collectionMembers: [Fingerprint] = [], nodeRoom: Int) {
        self.input = input
        self.maxDepth = maxDepth
        self.idKey = idKey
        self.collectionMembers = collectionMembers
        nodes.reserveCapacity(nodeRoom)
    }

    static func parse(
        _ bytes: [UInt8], maxDepth: Int, collections: (placement: CollectionPlacement, idKey: Fingerprint)?, refusingRepeatedMembers: Bool
    ) throws(JSONSyntaxError) -> (nodes: [JSONNode], rowStores: [JSONItems], extracted: [ExtractedArray], isCompact: Bool) {
        let result: Result<([JSONNode], [JSONItems], [ExtractedArray], Bool), JSONSyntaxError> = bytes.withUnsafeBufferPointer { input in
            let rootRole: Role = switch collections?.placement {
            case nil: .plain
            case .root: .collection
            case .rootMembers: .envelope
            }
            var members: [Fingerprint] = []
            if case .rootMembers(let names) = collections?.placement { members = names.map { Fingerprint.string($0) } }
            var parser = JSONParser(
                input: input, maxDepth: maxDepth, idKey: collections?.idKey ?? Fingerprint(high: 0, low: 0),
                // A collection's items leave the tape as they are read: then it stays short.
                collectionMembers: members, nodeRoom: min(input.count / 16 + 1, collections == nil ? .max : 1024)
            )
            parser.refusesRepeatedMembers = refusingRepeatedMembers
            do throws(JSONSyntaxError) {
                parser.skipWhitespace()
                guard parser.position < input.count else { throw parser.error("the body is empty; expected a JSON value") }
                _ = try parser.parseValue(depth: 0, role: rootRole)
                parser.skipWhitespace()
                guard parser.position == input.count else { throw parser.error("unexpected data after the JSON value") }
                return .success((parser.nodes, parser.rowStores, parser.extracted, !parser.skippedWhitespace))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// The UTF-8 bytes of the string whose text between its quotes is `content` (escapes
    /// decoded); empty for a text that is not a string's.
    static func decodedContent(_ content: ArraySlice<UInt8>) -> [UInt8] {
        let quoted = [UInt8(ascii: "\"")] + content + [UInt8(ascii: "\"")]
        return Array(((try? decodeString(quoted, span: 0..<quoted.count)) ?? "").utf8)
    }

    /// The decoded text of the string whose text (with quotes) spans `span` of `bytes`.
    static func decodeString(_ bytes: [UInt8], span: Range<Int>) throws(JSONSyntaxError) -> String {
        let result: Result<String, JSONSyntaxError> = bytes.withUnsafeBufferPointer { all in
            let input = UnsafeBufferPointer(rebasing: all[span])
            var parser = JSONParser(input: input, maxDepth: 0, nodeRoom: 0)
            do throws(JSONSyntaxError) {
                parser.position = 1
                let (start, decoded) = try parser.scanString()
                let text = decoded
                    ? String(decoding: parser.scratch, as: UTF8.self)
                    : String(decoding: UnsafeBufferPointer(rebasing: input[start..<(parser.position - 1)]), as: UTF8.self)
                return .success(text)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    func error(_ reason: String, at offset: Int? = nil) -> JSONSyntaxError {
        JSONSyntaxError(offset: offset ?? position, reason: reason)
    }

    var found: String {
        guard position < input.count else { return "the end of the input" }
        let byte = input[position]
        return byte >= 0x21 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
    }

    @inline(__always)
    private mutating func skipWhitespace() {
        while position < input.count {
            switch input[position] {
            case 0x20, 0x0A, 0x0D, 0x09:
                position += 1
                skippedWhitespace = true
            default: return
            }
        }
    }

    mutating func append(_ kind: ValueKind, start: Int, fingerprint: Fingerprint, childCount: Int32 = 0) -> Int {
        nodes.append(JSONNode(kind: kind, childCount: childCount, start: Int32(start), end: Int32(position),
                              next: Int32(nodes.count + 1), fingerprint: fingerprint))
        return nodes.count - 1
    }

    private mutating func parseValue(depth: Int, role: Role = .plain) throws(JSONSyntaxError) -> Int {
        guard position < input.count else { throw error("unexpected end of input; expected a value") }
        switch input[position] {
        case UInt8(ascii: "{"): return try parseContainer(object: true, depth: depth + 1, role: role)
        case UInt8(ascii: "["): return try parseContainer(object: false, depth: depth + 1, role: role)
        case UInt8(ascii: "\""): return try parseString()
        case UInt8(ascii: "t"): return try parseLiteral("true", .true)
        case UInt8(ascii: "f"): return try parseLiteral("false", .false)
        case UInt8(ascii: "n"): return try parseLiteral("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected \(found); expected a value")
        }
    }

    private mutating func parseLiteral(_ word: StaticString, _ kind: ValueKind) throws(JSONSyntaxError) -> Int {
        let start = position
        let count = word.utf8CodeUnitCount
        guard input.count - position >= count,
              (0..<count).allSatisfy({ input[position + $0] == word.utf8Start[$0] })
        else { throw error("invalid literal; expected \(word)") }
        position += count
        return append(kind, start: start, fingerprint: FingerprintHasher(tag: UInt64(kind.rawValue)).finalize())
    }

    private mutating func parseContainer(object: Bool, depth: Int, role: Role) throws(JSONSyntaxError) -> Int {
        guard depth <= maxDepth else { throw error("nesting deeper than \(maxDepth) levels") }
        let readsItems = !object && (role == .collection || role == .items)
        var claimedMembers: UInt64 = 0
        let start = position
        let enclosingSections = sectionStore
        if !object && role == .sections { sectionStore = newRowStore(startingAt: start) }
        defer { sectionStore = enclosingSections }
        // A list's items go to a store of their own; a section's to its collection's.
        var store: (index: Int, start: Int)?
        if readsItems { store = (role == .items ? sectionStore : nil) ?? newRowStore(startingAt: start) }
        // The store is taken out while this array's items are added, and put back after.
        var rows = JSONItems()
        if let store { swap(&rows, &rowStores[store.index]) }
        let firstRow = rows.count
        let index = append(object ? .object : .array, start: start, fingerprint: Fingerprint(high: 0, low: 0))
        let close = UInt8(ascii: object ? "}" : "]")
        position += 1
        var elements = ArrayFingerprint()
        var memberSum = Fingerprint(high: 0, low: 0)
        var count = 0
        skipWhitespace()
        if position < input.count && input[position] == close {
            position += 1
        } else {
            while true {
                skipWhitespace()
                if object {
                    memberSum = memberSum &+ (try parseMember(depth: depth, of: role, claimed: &claimedMembers))
                } else {
                    let value = try parseValue(depth: depth, role: role == .sections ? .section : .plain)
                    elements.add(nodes[value].fingerprint)
                    if let store {
                        if rows.count == rows.capacity && rows.count >= Self.firstRoom {
                            rows.reserveCapacity(room(for: rows.count, startingAt: store.start))
                        }
                        // The item is read, and its values leave the tape.
                        rows.append(nodes.withUnsafeBufferPointer { JSONItem(node: value, of: $0, idKey: idKey) })
                        // (A scalar left one node: removeLast() is far cheaper than removeLast(_:).)
                        if nodes.count == value + 1 { nodes.removeLast() } else { nodes.removeLast(nodes.count - value) }
                    }
                }
                count += 1
                skipWhitespace()
                guard position < input.count else {
                    throw error("unexpected end of input; expected ',' or '\(Character(Unicode.Scalar(close)))'")
                }
                let byte = input[position]
                position += 1
                if byte == close { break }
                guard byte == UInt8(ascii: ",") else {
                    position -= 1
                    throw error("unexpected \(found); expected ',' or '\(Character(Unicode.Scalar(close)))'")
                }
            }
        }
        if object && count > 1 && refusesRepeatedMembers { try checkDistinctMembers(of: index, count: count) }
        nodes[index].fingerprint = object ? .object(memberSum: memberSum, count: count) : elements.finalize()
        if let store {
            // The room to spare that growing left is not copied away here: a request's
            // document is brief, and what keeps items long compacts them (a snapshot).
            extracted.append(ExtractedArray(store: store.index, rows: firstRow..<rows.count))
            swap(&rows, &rowStores[store.index])
            nodes[index].childCount = -Int32(extracted.count)  // see JSONNode.extractedArray
        } else {
            nodes[index].childCount = Int32(object ? count * 2 : count)
        }
        nodes[index].end = Int32(position)
        nodes[index].next = Int32(nodes.count)
        return index
    }

    /// Parses one member of an object whose role is `role` (`claimed`: the collection
    /// members already found in it), `"name": value`; its fingerprint.
    @inline(__always)
    private mutating func parseMember(depth: Int, of role: Role, claimed: inout UInt64) throws(JSONSyntaxError) -> Fingerprint {
        guard position < input.count && input[position] == UInt8(ascii: "\"") else {
            throw error("unexpected \(found); expected a member name in double quotes")
        }
        let key = try parseString()
        skipWhitespace()
        guard position < input.count && input[position] == UInt8(ascii: ":") else {
            throw error("unexpected \(found); expected ':' after a member name")
        }
        position += 1
        skipWhitespace()
        let value = try parseValue(depth: depth, role: memberRole(of: nodes[key].fingerprint, in: role, claimed: &claimed))
        return .member(key: nodes[key].fingerprint, value: nodes[value].fingerprint)
    }

    /// Throws when the object at `object`, of `count` members, names one twice (names compare
    /// by their Unicode scalars: their fingerprints are of the decoded UTF-8). Its members are
    /// on the tape, each name (one node) followed by its value. A few names are compared with
    /// each other where they lie; many, through a set.
    private func checkDistinctMembers(of object: Int, count: Int) throws(JSONSyntaxError) {
        var key = object + 1
        if count <= 16 {
            for position in 0..<count {
                var earlier = object + 1
                for _ in 0..<position {
                    if nodes[earlier].fingerprint == nodes[key].fingerprint { throw repeatedMember(at: key) }
                    earlier = Int(nodes[earlier + 1].next)
                }
                key = Int(nodes[key + 1].next)
            }
            return
        }
        var seen = Set<Fingerprint>(minimumCapacity: count)
        for _ in 0..<count {
            guard seen.insert(nodes[key].fingerprint).inserted else { throw repeatedMember(at: key) }
            key = Int(nodes[key + 1].next)
        }
    }

    /// The error of the member name at node `key`, which its object names before.
    private func repeatedMember(at key: Int) -> JSONSyntaxError {
        let text = String(decoding: UnsafeBufferPointer(rebasing: input[Int(nodes[key].start)..<Int(nodes[key].end)]), as: UTF8.self)
        let shown = text.count > 100 ? String(text.prefix(100)) + "…\"" : text
        return JSONSyntaxError(
            offset: Int(nodes[key].start), reason: "the object names the member \(shown) twice; readers disagree on which value wins",
            duplicateMember: text
        )
    }

    /// A new, empty row store for the items of a collection whose text starts at `start`.
    private mutating func newRowStore(startingAt start: Int) -> (index: Int, start: Int) {
        // Room for the rows the rest of the input could hold at two bytes a row, up to 1,024
        // rows (past them, ``room(for:startingAt:)`` estimates): a small list's rows never grow.
        var rows = JSONItems()
        rows.reserveCapacity(min(Self.firstRoom, (input.count - start) / 2 + 1))
        rowStores.append(rows)
        return (rowStores.count - 1, start)
    }

    /// The rows a store has room for from the start; when they are full, it grows at once to
    /// an estimate of what the input holds (``room(for:startingAt:)``).
    private static let firstRoom = 1024

    /// The room a full store of `count` rows, whose collection starts at `start`, grows to
    /// at once: what the rest of the input could hold at the collection's bytes per row so
    /// far, instead of doubling. Each doubling copies the rows and leaves the old room
    /// behind, freed but touched, so millions of small items would take twice their size.
    /// Room never written is address space, not memory. Past the estimate (items that get
    /// smaller), it doubles.
    private func room(for count: Int, startingAt start: Int) -> Int {
        let bytesPerRow = max(2, (position - start) / count)
        return max(count * 2, count + (input.count - position) / bytesPerRow + 1)
    }

    /// The role of an object's member named by `key` in an object of role `role`: the first
    /// `sections` of a collection and the first `items` of a section are read as such (as
    /// ``JSONValue/collection(idKey:path:)`` reads them), and the first of each of the
    /// envelope's collections (`POST /diff` refuses a body naming one twice). Later members
    /// of the same name are plain values: each collection read as such has room made for
    /// its rows, which repeats of one name must not multiply. `claimed` marks the names
    /// taken in the object, a bit each (the envelope's by their index; `sections` and
    /// `items`, one name in their objects, bit 0).
    private func memberRole(of key: Fingerprint, in role: Role, claimed: inout UInt64) -> Role {
        switch role {
        case .envelope:
            guard let index = collectionMembers.firstIndex(of: key), index < UInt64.bitWidth, claimed & (1 << index) == 0 else { return .plain }
            claimed |= 1 << index
            return .collection
        case .collection where claimed & 1 == 0 && key == Self.sectionsKey:
            claimed |= 1
            return .sections
        case .section where claimed & 1 == 0 && key == Self.itemsKey:
            claimed |= 1
            return .items
        default:
            return .plain
        }
    }

    private static let sectionsKey = Fingerprint.string("sections")
    private static let itemsKey = Fingerprint.string("items")
}
