/// Strings and numbers: scanned in place, checked as RFC 8259 and UTF-8 require, decoded
/// only when they hold escapes.
extension JSONParser {
    mutating func parseString() throws(JSONSyntaxError) -> Int {
        let start = position
        position += 1
        let (contentStart, decoded) = try scanString()
        let fingerprint = decoded
            ? scratch.withUnsafeBytes { Fingerprint.string($0) }
            : Fingerprint.string(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: input[contentStart..<(position - 1)])))
        return append(.string, start: start, fingerprint: fingerprint)
    }

    /// Scans a string from just after its opening quote to just after its closing quote.
    /// Returns where its text starts and whether it had to be decoded (escapes, non-ASCII
    /// validation) into `scratch`; otherwise the raw bytes are the decoded text.
    mutating func scanString() throws(JSONSyntaxError) -> (start: Int, decoded: Bool) {
        let start = position
        while position < input.count {
            let byte = input[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return (start, false)
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { break }
            position += 1
        }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: input[start..<position]))
        while position < input.count {
            let byte = input[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return (start, true)
            case UInt8(ascii: "\\"):
                try scanEscape()
            case ..<0x20:
                throw error("unescaped control character in a string")
            case ..<0x80:
                scratch.append(byte)
                position += 1
            default:
                try scanUTF8Sequence()
            }
        }
        throw error("unexpected end of input inside a string")
    }

    mutating func scanEscape() throws(JSONSyntaxError) {
        guard position + 1 < input.count else { throw error("unexpected end of input inside a string") }
        let escaped = input[position + 1]
        position += 2
        switch escaped {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(escaped)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hexQuad()
            if (0xD800..<0xDC00).contains(scalar) {
                guard position + 1 < input.count, input[position] == UInt8(ascii: "\\"), input[position + 1] == UInt8(ascii: "u")
                else { throw error("a high surrogate \\u escape must be followed by a low surrogate") }
                position += 2
                let low = try hexQuad()
                guard (0xDC00..<0xE000).contains(low) else { throw error("invalid low surrogate in a \\u escape", at: position - 6) }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw error("a lone low surrogate in a \\u escape", at: position - 6)
            }
            scratch.append(contentsOf: Unicode.UTF8.encode(Unicode.Scalar(scalar)!)!)
        default:
            throw error("invalid escape '\\\(Character(Unicode.Scalar(escaped)))' in a string", at: position - 2)
        }
    }

    mutating func hexQuad() throws(JSONSyntaxError) -> UInt32 {
        guard input.count - position >= 4 else { throw error("unexpected end of input in a \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = input[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("invalid hex digit in a \\u escape")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    /// Copies one multi-byte UTF-8 sequence into `scratch`, rejecting invalid ones
    /// (overlong forms, surrogates, values past U+10FFFF).
    mutating func scanUTF8Sequence() throws(JSONSyntaxError) {
        let lead = input[position]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        default: throw error("invalid UTF-8")
        }
        guard input.count - position >= length else { throw error("invalid UTF-8 (truncated sequence)") }
        guard secondRange.contains(input[position + 1]) else { throw error("invalid UTF-8") }
        for offset in 2..<max(length, 2) where !(0x80...0xBF).contains(input[position + offset]) {
            throw error("invalid UTF-8")
        }
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: input[position..<(position + length)]))
        position += length
    }

    /// Numbers are fingerprinted in a canonical decimal form: significant digits without
    /// leading or trailing zeros, and a power of ten, so `1`, `1.0` and `10e-1` are equal.
    mutating func parseNumber() throws(JSONSyntaxError) -> Int {
        let start = position
        let negative = input[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        scratch.removeAll(keepingCapacity: true)
        var exponent = 0
        guard position < input.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(input[position]) else {
            throw error("unexpected \(found); expected a digit")
        }
        if input[position] == UInt8(ascii: "0") {
            position += 1
        } else {
            scanDigits { $0.append($1) }
        }
        if position < input.count && input[position] == UInt8(ascii: ".") {
            position += 1
            let before = position
            scanDigits { digits, digit in digits.append(digit) }
            guard position > before else { throw error("unexpected \(found); expected a digit after '.'") }
            exponent -= position - before
        }
        if position < input.count && (input[position] | 0x20) == UInt8(ascii: "e") {
            position += 1
            var sign = 1
            if position < input.count && (input[position] == UInt8(ascii: "+") || input[position] == UInt8(ascii: "-")) {
                sign = input[position] == UInt8(ascii: "-") ? -1 : 1
                position += 1
            }
            let before = position
            var written = 0
            while position < input.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(input[position]) {
                written = written * 10 + Int(input[position] - UInt8(ascii: "0"))
                guard written < 1 << 40 else { throw error("number exponent out of range") }
                position += 1
            }
            guard position > before else { throw error("unexpected \(found); expected a digit in the exponent") }
            exponent += sign * written
        }
        // Canonical form: drop leading zeros, then trailing zeros into the exponent.
        let firstSignificant = scratch.firstIndex { $0 != UInt8(ascii: "0") } ?? scratch.endIndex
        var lastSignificant = scratch.endIndex
        while lastSignificant > firstSignificant && scratch[lastSignificant - 1] == UInt8(ascii: "0") {
            lastSignificant -= 1
            exponent += 1
        }
        var hasher = FingerprintHasher(tag: UInt64(ValueKind.number.rawValue))
        if firstSignificant == lastSignificant {
            hasher.combine(0)  // zero, whatever its sign or exponent
        } else {
            hasher.combine(negative ? 2 : 1)
            hasher.combine(UInt64(bitPattern: Int64(exponent)))
            scratch[firstSignificant..<lastSignificant].withUnsafeBytes { hasher.combine(bytes: $0) }
        }
        return append(.number, start: start, fingerprint: hasher.finalize())
    }

    mutating func scanDigits(_ keep: (inout [UInt8], UInt8) -> Void) {
        while position < input.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(input[position]) {
            keep(&scratch, input[position])
            position += 1
        }
    }
}
