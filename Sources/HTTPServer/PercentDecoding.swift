/// Percent-decoding of a request's path and query arguments.
enum PercentDecoding {
    /// Decodes `%HH` in `text` in place, as libmicrohttpd's default does, except that `%00`
    /// stays as it is: a decoded NUL would end the C string early, so `/feeds/a%00junk`
    /// would reach the service as `/feeds/a`. Kept, `%00` makes the feed id or argument
    /// invalid, and the request gets a 400. Returns the decoded length; the text after it
    /// is left as it was.
    static func decode<Text: MutableCollection<UInt8> & RandomAccessCollection>(_ text: inout Text) -> Int where Text.Index == Int {
        var read = text.startIndex
        var written = text.startIndex
        while read < text.endIndex {
            if text[read] == UInt8(ascii: "%"), read + 2 < text.endIndex,
               let high = hexValue(text[read + 1]), let low = hexValue(text[read + 2]), high | low != 0 {
                text[written] = high << 4 | low
                read += 3
            } else {
                text[written] = text[read]
                read += 1
            }
            written += 1
        }
        return written - text.startIndex
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
