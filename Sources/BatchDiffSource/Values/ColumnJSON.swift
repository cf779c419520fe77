import BatchDiffJSON

/// A column's value, in its type's text form (as `pgoutput` and a text-format query send
/// it, with `DateStyle=ISO` and `TimeZone=UTC`), written as JSON by its ``ColumnKind``.
enum ColumnJSON {
    /// Writes `text` (`nil`: SQL NULL) as JSON to `output`.
    static func write(_ text: ArraySlice<UInt8>?, as kind: ColumnKind, to output: inout JSONOutput) {
        guard let text else { return output.null() }
        switch kind {
        case .integer:
            output.value(text: text)
        case .float:
            isJSONNumber(text) ? output.value(text: text) : output.string(String(decoding: text, as: UTF8.self))
        case .numeric:
            isJSONNumber(text) && significantDigits(text) <= 15 ? output.value(text: text) : output.string(String(decoding: text, as: UTF8.self))
        case .bool:
            output.bool(text.first == UInt8(ascii: "t"))
        case .timestampWithZone:
            output.string(time(text, zone: true))
        case .timestamp:
            output.string(time(text, zone: false))
        case .json:
            output.value(text: text)
        case .array(let element):
            var reader = ArrayLiteral(text: text)
            reader.write(element: element, to: &output)
        case .text:
            output.string(String(decoding: text, as: UTF8.self))
        }
    }

    /// Whether `text` is a number JSON reads (not `NaN`, `Infinity`, nor `.5`).
    static func isJSONNumber(_ text: ArraySlice<UInt8>) -> Bool {
        var rest = text[...]
        if rest.first == UInt8(ascii: "-") { rest = rest.dropFirst() }
        func digits() -> Int {
            let count = rest.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }.count
            rest = rest.dropFirst(count)
            return count
        }
        let whole = rest.first
        let wholeDigits = digits()
        guard wholeDigits > 0, whole != UInt8(ascii: "0") || wholeDigits == 1 else { return false }
        if rest.first == UInt8(ascii: ".") {
            rest = rest.dropFirst()
            guard digits() > 0 else { return false }
        }
        if rest.first == UInt8(ascii: "e") || rest.first == UInt8(ascii: "E") {
            rest = rest.dropFirst()
            if rest.first == UInt8(ascii: "+") || rest.first == UInt8(ascii: "-") { rest = rest.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return rest.isEmpty
    }

    /// The significant digits of a decimal number's text: from the first digit that is not
    /// a leading zero to the last digit of the whole part or the last non-zero one after
    /// the point (`0.00120` has 2, `1200` 4, `12.50` 3).
    static func significantDigits(_ text: ArraySlice<UInt8>) -> Int {
        let mantissa = text.prefix { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }
        let point = mantissa.firstIndex(of: UInt8(ascii: "."))
        var digits = mantissa.filter { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }[...]
        digits = digits.drop { $0 == UInt8(ascii: "0") }
        if point != nil {
            while digits.last == UInt8(ascii: "0") { digits = digits.dropLast() }
        }
        return digits.count
    }

    /// A time's text form (`2024-05-01 12:30:00.5+00`) with six fractional digits and a `T`
    /// (and a `Z` for a time with zone); a text that is not such a time (`infinity`, a year
    /// BC) is kept as it is.
    static func time(_ text: ArraySlice<UInt8>, zone: Bool) -> String {
        let string = String(decoding: text, as: UTF8.self)
        let bytes = Array(text)
        // YYYY-MM-DD HH:MM:SS is 19 bytes; the zone of a UTC session is "+00".
        guard bytes.count >= 19, bytes[10] == UInt8(ascii: " "), bytes[4] == UInt8(ascii: "-") else { return string }
        var body = bytes[...]
        if zone {
            guard string.hasSuffix("+00") else { return string }
            body = body.dropLast(3)
        }
        guard body.count == 19 || (body.count > 20 && body[body.startIndex + 19] == UInt8(ascii: ".")) else { return string }
        let fraction = body.count > 20 ? Array(body[(body.startIndex + 20)...]) : []
        guard fraction.count <= 6, fraction.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return string }
        var written = Array(body.prefix(19))
        written[10] = UInt8(ascii: "T")
        written.append(UInt8(ascii: "."))
        written += fraction + Array(repeating: UInt8(ascii: "0"), count: 6 - fraction.count)
        if zone { written.append(UInt8(ascii: "Z")) }
        return String(decoding: written, as: UTF8.self)
    }
}

/// An array's text form (`{1,2,NULL}`, `{{"a b",c},{d,e}}`, `[0:1]={x,y}`) read into JSON
/// arrays, element by element.
private struct ArrayLiteral {
    let text: ArraySlice<UInt8>
    var index: Int

    init(text: ArraySlice<UInt8>) {
        self.text = text
        // Explicit bounds ("[0:1]={...}") are skipped: JSON arrays start at 0.
        if text.first == UInt8(ascii: "["), let equals = text.firstIndex(of: UInt8(ascii: "=")) {
            index = equals + 1
        } else {
            index = text.startIndex
        }
    }

    mutating func write(element: ColumnKind, to output: inout JSONOutput) {
        guard index < text.endIndex, text[index] == UInt8(ascii: "{") else {
            // Not an array literal after all: its text as a string.
            return output.string(String(decoding: text, as: UTF8.self))
        }
        index += 1
        var elements: [ArraySlice<UInt8>?] = []
        var nested: [JSONOutput] = []
        while index < text.endIndex, text[index] != UInt8(ascii: "}") {
            if text[index] == UInt8(ascii: ",") { index += 1; continue }
            if text[index] == UInt8(ascii: "{") {
                var inner = JSONOutput()
                write(element: element, to: &inner)
                nested.append(inner)
                continue
            }
            elements.append(nextElement())
        }
        index += 1
        if !nested.isEmpty {
            return output.array(nested) { $0.value(text: $1.bytes) }
        }
        output.array(elements) { ColumnJSON.write($1, as: element, to: &$0) }
    }

    /// The next element's text, unquoted and unescaped (`nil` for an unquoted NULL).
    private mutating func nextElement() -> ArraySlice<UInt8>? {
        if text[index] == UInt8(ascii: "\"") {
            index += 1
            var value: [UInt8] = []
            while index < text.endIndex, text[index] != UInt8(ascii: "\"") {
                if text[index] == UInt8(ascii: "\\"), index + 1 < text.endIndex { index += 1 }
                value.append(text[index])
                index += 1
            }
            index += 1
            return value[...]
        }
        let start = index
        while index < text.endIndex, text[index] != UInt8(ascii: ","), text[index] != UInt8(ascii: "}") { index += 1 }
        let value = text[start..<index]
        return value.elementsEqual("NULL".utf8) ? nil : value
    }
}
