/// How a column's values become JSON (docs/sources.md §3), by the column's type: numbers,
/// strings, booleans, times, JSON as it is, arrays of any of these, and the text form of
/// every other type.
indirect enum ColumnKind: Equatable, Sendable {
    /// `smallint`, `integer`, `bigint`, `oid`: a number.
    case integer
    /// `real`, `double precision`: a number (a string for NaN and the infinities).
    case float
    /// `numeric`: a number of at most 15 significant digits, else a string.
    case numeric
    case bool
    /// `timestamptz`: `YYYY-MM-DDTHH:MM:SS.ffffffZ`, in UTC.
    case timestampWithZone
    /// `timestamp`: `YYYY-MM-DDTHH:MM:SS.ffffff`.
    case timestamp
    /// `json`, `jsonb`: the value as it is.
    case json
    /// An array of `element`s (of any dimensions).
    case array(of: ColumnKind)
    /// Text, `varchar`, `uuid`, `date` and every other type: its text form, as a string.
    case text

    /// The kind of the built-in type `oid`; `element` is the element type of an array type
    /// (`pg_type.typelem` of a type whose `typcategory` is `A`; 0 for every other type).
    init(typeOID oid: UInt32, element: UInt32 = 0) {
        if let known = Self.arrays[oid] {
            self = .array(of: known)
            return
        }
        if element != 0 {
            self = .array(of: ColumnKind(typeOID: element))
            return
        }
        switch oid {
        case 20, 21, 23, 26: self = .integer
        case 700, 701: self = .float
        case 1700: self = .numeric
        case 16: self = .bool
        case 1184: self = .timestampWithZone
        case 1114: self = .timestamp
        case 114, 3802: self = .json
        default: self = .text
        }
    }

    /// The built-in array types whose element types are known without asking the catalog.
    private static let arrays: [UInt32: ColumnKind] = [
        1000: .bool, 1005: .integer, 1007: .integer, 1016: .integer, 1028: .integer, 1021: .float, 1022: .float,
        1231: .numeric, 1009: .text, 1015: .text, 1014: .text, 2951: .text, 1182: .text, 1115: .timestamp,
        1185: .timestampWithZone, 199: .json, 3807: .json,
    ]
}
