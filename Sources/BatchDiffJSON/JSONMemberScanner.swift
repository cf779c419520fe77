/// Reads members of an object from its JSON text without parsing it whole: the texts of the
/// first members of the names asked for, other values skipped over. For texts already known
/// to be valid JSON (a row of a parsed document); whitespace between tokens is allowed.
enum JSONMemberScanner {
    /// The text of the value of the first member of each of `names` (UTF-8 bytes) in the
    /// object whose text is `text`; `nil` for a name it lacks, and for every name when the
    /// text is not an object.
    static func values(of names: [[UInt8]], in text: ArraySlice<UInt8>) -> [ArraySlice<UInt8>?] {
        var found: [ArraySlice<UInt8>?] = []
        scan(names, in: text, into: &found)
        return found
    }

    /// ``values(of:in:)`` written into `found` (its room kept from one row to the next).
    static func scan(_ names: [[UInt8]], in text: ArraySlice<UInt8>, into found: inout [ArraySlice<UInt8>?]) {
        found.removeAll(keepingCapacity: true)
        found.append(contentsOf: repeatElement(nil, count: names.count))
        var left = names.count
        guard left > 0 else { return }
        forEachMember(in: text) { key, _, value in
            // A name compares as it is written unless it is written with escapes.
            let index = if key.contains(UInt8(ascii: "\\")) {
                names.firstIndex(of: JSONParser.decodedContent(key))
            } else {
                names.firstIndex { $0.elementsEqual(key) }
            }
            if let index, found[index] == nil {
                found[index] = value
                left -= 1
            }
            return left > 0
        }
    }

    /// A member of an object, by where it stands in the object's text.
    struct Member {
        /// The name as written, between its quotes.
        var name: Range<Int>
        /// The name's text, quotes included.
        var key: Range<Int>
        var value: Range<Int>
        /// Whether the name is written with escapes (compare it decoded).
        var isEscaped: Bool
    }

    /// Every member of the object whose text is `text`, in order; `nil` when the text is not
    /// an object.
    static func members(of text: ArraySlice<UInt8>) -> [Member]? {
        var found: [Member] = []
        return members(of: text, into: &found) ? found : nil
    }

    /// ``members(of:)`` written into `members` (its room kept from one object to the next);
    /// false when the text is not an object.
    static func members(of text: ArraySlice<UInt8>, into members: inout [Member]) -> Bool {
        members.removeAll(keepingCapacity: true)
        return forEachMember(in: text) { name, key, value in
            members.append(Member(
                name: name.startIndex..<name.endIndex, key: key.startIndex..<key.endIndex, value: value.startIndex..<value.endIndex,
                isEscaped: name.contains(UInt8(ascii: "\\"))
            ))
            return true
        }
    }

    /// Whether member `a` of the object text `aText` and member `b` of `bText` have one name.
    static func sameName(_ a: Member, in aText: ArraySlice<UInt8>, _ b: Member, in bText: ArraySlice<UInt8>) -> Bool {
        guard a.isEscaped || b.isEscaped else { return aText[a.name].elementsEqual(bText[b.name]) }
        return name(a, in: aText).elementsEqual(name(b, in: bText))
    }

    /// Member `member`'s name, decoded.
    static func name(_ member: Member, in text: ArraySlice<UInt8>) -> [UInt8] {
        member.isEscaped ? JSONParser.decodedContent(text[member.name]) : Array(text[member.name])
    }

    /// Calls `body` with each member of the object whose text is `text`: its name as written
    /// (between its quotes), its name's text with the quotes, and its value's text, in order,
    /// until `body` returns false. False when the text is not an object.
    @discardableResult
    private static func forEachMember(
        in text: ArraySlice<UInt8>, _ body: (_ name: ArraySlice<UInt8>, _ key: ArraySlice<UInt8>, _ value: ArraySlice<UInt8>) -> Bool
    ) -> Bool {
        // Read through the bytes themselves (a merge answer scans every reloaded row twice);
        // positions in `bytes` count from the slice's start.
        text.withUnsafeBufferPointer { bytes in
            let base = text.startIndex
            var position = skipWhitespace(bytes, from: 0)
            guard position < bytes.count, bytes[position] == UInt8(ascii: "{") else { return false }
            position += 1
            while true {
                position = skipWhitespace(bytes, from: position)
                guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { return true }
                let keyEnd = stringEnd(bytes, from: position)
                let keyStart = position
                position = skipWhitespace(bytes, from: keyEnd) + 1  // the colon
                position = skipWhitespace(bytes, from: position)
                let valueEnd = valueEnd(bytes, from: position)
                let name = text[(base + keyStart + 1)..<(base + max(keyStart + 1, keyEnd - 1))]
                guard body(name, text[(base + keyStart)..<(base + keyEnd)], text[(base + position)..<(base + valueEnd)]) else { return true }
                position = skipWhitespace(bytes, from: valueEnd)
                guard position < bytes.count, bytes[position] == UInt8(ascii: ",") else { return true }
                position += 1
            }
        }
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    private static func skipWhitespace(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var position = start
        while position < bytes.count, isWhitespace(bytes[position]) { position += 1 }
        return position
    }

    /// One past the closing quote of the string whose opening quote is at `start`.
    private static func stringEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var position = start + 1
        while position < bytes.count, bytes[position] != UInt8(ascii: "\"") {
            position += bytes[position] == UInt8(ascii: "\\") ? 2 : 1
        }
        return min(position + 1, bytes.count)
    }

    /// One past the end of the value that starts at `start`.
    private static func valueEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard start < bytes.count else { return start }
        switch bytes[start] {
        case UInt8(ascii: "\""):
            return stringEnd(bytes, from: start)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var position = start
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: "\""):
                    position = stringEnd(bytes, from: position)
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return position + 1 }
                default: break
                }
                position += 1
            }
            return position
        default:
            var position = start
            while position < bytes.count {
                let byte = bytes[position]
                if byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") || isWhitespace(byte) { break }
                position += 1
            }
            return position
        }
    }
}
