/// A key member's value as orders compare it (docs/feeds.md §14): `null` (and a missing
/// member) before `false`, before `true`, before numbers (by their exact decimal value:
/// `1`, `1.0` and `10e-1` tie), before strings (by their Unicode scalars: the order of their
/// UTF-8 bytes). Numbers and strings stay slices of the row's text; a string written with
/// escapes is decoded once, when its key is read.
public enum SortKey: Sendable {
    case null
    case `false`
    case `true`
    /// An integer of at most 18 digits, read once (the commonest key compares without its text).
    case integer(Int64)
    /// Any other number's text.
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
        default: self = JSONValueOrder.smallInteger(text).map(SortKey.integer) ?? .number(text)
        }
    }

    private var rank: Int {
        switch self {
        case .null: 0
        case .false: 1
        case .true: 2
        case .integer, .number: 3
        case .string: 4
        }
    }

    /// A number that never decreases as keys rise in their order (two keys whose prefixes
    /// differ compare as their prefixes do; equal prefixes tell nothing): the rank in its
    /// top three bits, then a number's value as a `Double` (rounding never reverses an
    /// order), a string's first seven bytes. A sort compares these before the keys.
    var orderPrefix: UInt64 {
        switch self {
        case .null: 0
        case .false: 1 << 61
        case .true: 2 << 61
        case .integer(let value): 3 << 61 | Self.orderedBits(Double(value)) >> 3
        case .number(let text): 3 << 61 | Self.orderedBits(Double(String(decoding: text, as: UTF8.self)) ?? 0) >> 3
        case .string(let bytes): 4 << 61 | bytes.prefix(7).reduce(0) { $0 << 8 | UInt64($1) } << (8 * (7 - UInt64(min(bytes.count, 7))) + 5)
        }
    }

    /// `value`'s bits, turned so that they rise as it does (zero of either sign alike).
    private static func orderedBits(_ value: Double) -> UInt64 {
        let bits = (value == 0 ? 0 : value).bitPattern
        return bits >> 63 == 1 ? ~bits : bits | 1 << 63
    }

    /// Negative when `left` comes first, zero when they tie, positive when `right` does.
    public static func compare(_ left: SortKey, _ right: SortKey) -> Int {
        switch (left, right) {
        case (.integer(let left), .integer(let right)):
            return left < right ? -1 : left == right ? 0 : 1
        case (.number(let left), .number(let right)):
            return JSONValueOrder.compareNumbers(left, right)
        case (.integer(let left), .number(let right)):
            return JSONValueOrder.compareNumbers(Array(String(left).utf8)[...], right)
        case (.number(let left), .integer(let right)):
            return JSONValueOrder.compareNumbers(left, Array(String(right).utf8)[...])
        case (.string(let left), .string(let right)):
            return left.elementsEqual(right) ? 0 : left.lexicographicallyPrecedes(right) ? -1 : 1
        default:
            return left.rank - right.rank
        }
    }
}
