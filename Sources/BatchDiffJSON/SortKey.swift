/// A key member's value as orders compare it (docs/feeds.md §14): `null` (and a missing
/// member) before `false`, before `true`, before numbers (by their exact decimal value:
/// `1`, `1.0` and `10e-1` tie), before strings (by their Unicode scalars: the order of their
/// UTF-8 bytes). Numbers and strings stay slices of the row's text; a string written with
/// escapes is decoded once, when its key is read.
public enum SortKey: Sendable {
    case null
    case `false`
    case `true`
    /// A number's text.
    case number(ArraySlice<UInt8>)
    /// A string's UTF-8 bytes.
    case string(ArraySlice<UInt8>)

    /// The key a scalar's JSON `text` holds; `nil` for an array or an object.
    init?(text: ArraySlice<UInt8>) {
        switch text.first {
        case UInt8(ascii: "n"): self = .null
        case UInt8(ascii: "f"): self = .false
        case UInt8(ascii: "t"): self = .true
        case UInt8(ascii: "\""):
            let content = text.dropFirst().dropLast()
            self = .string(content.contains(UInt8(ascii: "\\")) ? JSONParser.decodedContent(content)[...] : content)
        case UInt8(ascii: "["), UInt8(ascii: "{"), nil: return nil
        default: self = .number(text)
        }
    }

    private var rank: Int {
        switch self {
        case .null: 0
        case .false: 1
        case .true: 2
        case .number: 3
        case .string: 4
        }
    }

    /// Negative when `left` comes first, zero when they tie, positive when `right` does.
    public static func compare(_ left: SortKey, _ right: SortKey) -> Int {
        switch (left, right) {
        case (.number(let left), .number(let right)):
            return JSONValueOrder.compareNumbers(left, right)
        case (.string(let left), .string(let right)):
            return left.elementsEqual(right) ? 0 : left.lexicographicallyPrecedes(right) ? -1 : 1
        default:
            return left.rank - right.rank
        }
    }
}
