/// How JSON numbers compare by value, read from their texts (``SortKey``).
enum JSONValueOrder {
    /// Negative, zero or positive as the number written `left` is below, equal to or above
    /// the one written `right`, exactly (no rounding to a `Double`: `9007199254740993` is
    /// above `9007199254740992`); any zero equals any other.
    static func compareNumbers(_ left: ArraySlice<UInt8>, _ right: ArraySlice<UInt8>) -> Int {
        if let left = smallInteger(left), let right = smallInteger(right) { return left < right ? -1 : left == right ? 0 : 1 }
        let (left, right) = (DecimalText(left), DecimalText(right))
        if left.isZero || right.isZero || left.negative != right.negative {
            return left.sign - right.sign
        }
        let magnitude = left.exponent != right.exponent ? (left.exponent < right.exponent ? -1 : 1) : DecimalText.compareDigits(left, right)
        return left.negative ? -magnitude : magnitude
    }

    /// The integer `text` writes, when it is one of at most 18 digits (so it fits).
    static func smallInteger(_ text: ArraySlice<UInt8>) -> Int64? {
        let negative = text.first == UInt8(ascii: "-")
        let digits = negative ? text.dropFirst() : text
        guard (1...18).contains(digits.count) else { return nil }
        var value: Int64 = 0
        for byte in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        return negative ? -value : value
    }
}

/// A JSON number's text read as sign, significant digits and a power of ten: `-0.0125e2`
/// is negative, its digits `125`, its exponent 1 (it is -0.125 × 10^1). Nothing is copied:
/// digits are read from the text.
private struct DecimalText {
    let text: ArraySlice<UInt8>
    let negative: Bool
    /// Where the digits before the point, and those after it, are.
    let integerDigits: Range<Int>
    let fractionDigits: Range<Int>
    /// The index (among all digits) of the first significant one, and one past the last.
    let significant: Range<Int>
    /// The value is 0.d1d2… × 10^exponent, d1 the first significant digit.
    let exponent: Int

    init(_ text: ArraySlice<UInt8>) {
        self.text = text
        var position = text.startIndex
        negative = text[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        let integerStart = position
        while position < text.endIndex, Self.isDigit(text[position]) { position += 1 }
        integerDigits = integerStart..<position
        var fractionStart = position
        if position < text.endIndex, text[position] == UInt8(ascii: ".") {
            position += 1
            fractionStart = position
            while position < text.endIndex, Self.isDigit(text[position]) { position += 1 }
        }
        fractionDigits = fractionStart..<position
        var written = 0
        if position < text.endIndex, text[position] | 0x20 == UInt8(ascii: "e") {
            position += 1
            let sign = text[position] == UInt8(ascii: "-") ? -1 : 1
            if text[position] == UInt8(ascii: "-") || text[position] == UInt8(ascii: "+") { position += 1 }
            while position < text.endIndex, Self.isDigit(text[position]) {
                written = written * 10 + Int(text[position] - UInt8(ascii: "0"))
                position += 1
            }
            written *= sign
        }
        let count = integerDigits.count + fractionDigits.count
        let digit = { [integerDigits, fractionDigits] index in Self.digit(index, of: text, integerDigits, fractionDigits) }
        var first = 0
        while first < count, digit(first) == UInt8(ascii: "0") { first += 1 }
        var last = count
        while last > first, digit(last - 1) == UInt8(ascii: "0") { last -= 1 }
        significant = first..<last
        exponent = integerDigits.count - first + written
    }

    var isZero: Bool { significant.isEmpty }
    /// -1, 0 or 1.
    var sign: Int { isZero ? 0 : negative ? -1 : 1 }

    /// The digit at `index` among all the digits (before the point, then after it).
    func digit(_ index: Int) -> UInt8 {
        Self.digit(index, of: text, integerDigits, fractionDigits)
    }

    private static func digit(_ index: Int, of text: ArraySlice<UInt8>, _ integerDigits: Range<Int>, _ fractionDigits: Range<Int>) -> UInt8 {
        index < integerDigits.count ? text[integerDigits.lowerBound + index] : text[fractionDigits.lowerBound + index - integerDigits.count]
    }

    /// How the significant digits of `left` and `right`, of one exponent, compare (a digit
    /// string that ends first is the smaller: its next digits are zeros).
    static func compareDigits(_ left: DecimalText, _ right: DecimalText) -> Int {
        var (l, r) = (left.significant.lowerBound, right.significant.lowerBound)
        while l < left.significant.upperBound, r < right.significant.upperBound {
            let (a, b) = (left.digit(l), right.digit(r))
            if a != b { return a < b ? -1 : 1 }
            l += 1
            r += 1
        }
        let (leftLeft, rightLeft) = (left.significant.upperBound - l, right.significant.upperBound - r)
        return leftLeft == rightLeft ? 0 : leftLeft > 0 ? 1 : -1
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
}
