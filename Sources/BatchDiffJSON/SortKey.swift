/// A key member's value as orders compare it (docs/feeds.md §14): `null` (and a missing
/// member) before `false`, before `true`, before numbers (by their exact decimal value:
/// `1`, `1.0` and `10e-1` tie), before strings (by their Unicode scalars: the order of their
/// UTF-8 bytes). Numbers and strings stay slices of the row's text, decoded only to compare
/// a string written with escapes.
public enum SortKey: Sendable {
    case null
    case `false`
    case `true`
    /// A number's text.
    case number(ArraySlice<UInt8>)
    /// A string's text between its quotes, and whether it holds an escape.
    case string(ArraySlice<UInt8>, escaped: Bool)

    /// The key a scalar's JSON `text` holds; `nil` for an array or an object.
    init?(text: ArraySlice<UInt8>) {
        switch text.first {
        case UInt8(ascii: "n"): self = .null
        case UInt8(ascii: "f"): self = .false
        case UInt8(ascii: "t"): self = .true
        case UInt8(ascii: "\""):
            let content = text.dropFirst().dropLast()
            self = .string(content, escaped: content.contains(UInt8(ascii: "\\")))
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
        case (.string(let left, let leftEscaped), .string(let right, let rightEscaped)):
            return JSONValueOrder.compareStrings(left, escaped: leftEscaped, right, escaped: rightEscaped)
        default:
            return left.rank - right.rank
        }
    }
}
