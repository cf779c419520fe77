/// Header values read as they are on the wire: ASCII tokens, lists and parameters, without
/// Foundation's character sets (a request's headers are read on every request).

/// The elements of a header that lists values with weights (`Accept`, `Accept-Encoding`,
/// RFC 9110 §12.4.2): each value lowercased, without its parameters, and its `q` (1 when
/// not given).
func qualityValues(_ header: String) -> [(value: String, quality: Double)] {
    header.utf8.split(separator: UInt8(ascii: ",")).map { element in
        let parts = element.split(separator: UInt8(ascii: ";"))
        let value = parts.first.map { asciiLowercased(trimmed($0)) } ?? ""
        let quality = parts.dropFirst().compactMap { parameter -> Double? in
            let pair = parameter.split(separator: UInt8(ascii: "="), maxSplits: 1).map(trimmed)
            return pair.count == 2 && asciiLowercased(pair[0]) == "q" ? Double(String(Substring(pair[1]))) : nil
        }.first ?? 1
        return (value, quality)
    }
}

/// The media type of a `Content-Type` value, lowercased, without parameters or spaces.
func mediaType(_ header: String) -> String {
    let type = header.utf8.firstIndex(of: UInt8(ascii: ";")).map { header.utf8[..<$0] } ?? header.utf8[...]
    return asciiLowercased(trimmed(type))
}

/// `text` without the spaces and tabs around it (a header's optional whitespace).
func trimmed(_ text: Substring.UTF8View) -> Substring.UTF8View {
    let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
    guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else {
        return text[text.endIndex...]
    }
    return text[first...last]
}

/// `text` with ASCII capitals lowered (tokens are ASCII; other bytes stay as they are).
private func asciiLowercased(_ text: Substring.UTF8View) -> String {
    guard text.contains(where: { (0x41...0x5A).contains($0) }) else { return String(Substring(text)) }
    return String(Substring(text)).lowercased()
}
