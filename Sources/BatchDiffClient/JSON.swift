import Foundation

/// Any JSON value, for items that have no type of their own in the app (and for `batchdiff
/// follow`, which prints what it gets).
///
/// Numbers keep their exact decimal value (`9007199254740993` stays itself), so a value
/// decoded and encoded again says what the server sent; only numbers beyond `Decimal`'s
/// range (about 10^165) are read as `Double`. Objects keep their members by name, not
/// their order.
public enum JSON: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(Decimal)
    case string(String)
    case array([JSON])
    case object([String: JSON])

    /// The member `name` of an object; `nil` for other values and missing members.
    public subscript(name: String) -> JSON? {
        guard case .object(let members) = self else { return nil }
        return members[name]
    }

    /// The item's identity as the server reads it (docs/batch-format.md §1.2): the member
    /// `idKey` of an object when it holds a string or a number, else the whole value.
    public func identity(idKey: String = "id") -> JSON {
        switch self[idKey] {
        case .string?, .number?: self[idKey]!
        default: self
        }
    }
}

extension JSON: Codable {
    public init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var elements: [JSON] = []
            while !array.isAtEnd { elements.append(try array.decode(JSON.self)) }
            self = .array(elements)
        } else if let object = try? decoder.container(keyedBy: MemberName.self) {
            var members: [String: JSON] = [:]
            for key in object.allKeys { members[key.stringValue] = try object.decode(JSON.self, forKey: key) }
            self = .object(members)
        } else {
            let value = try decoder.singleValueContainer()
            if value.decodeNil() {
                self = .null
            } else if let bool = try? value.decode(Bool.self) {
                self = .bool(bool)
            } else if let string = try? value.decode(String.self) {
                self = .string(string)
            } else if let decimal = try? value.decode(Decimal.self) {
                self = .number(decimal)
            } else {
                let double = try value.decode(Double.self)
                guard let decimal = Decimal(string: "\(double)") else {
                    throw DecodingError.dataCorruptedError(in: value, debugDescription: "the number \(double) has no decimal value")
                }
                self = .number(decimal)
            }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var value = encoder.singleValueContainer()
            try value.encodeNil()
        case .bool(let bool):
            var value = encoder.singleValueContainer()
            try value.encode(bool)
        case .number(let number):
            var value = encoder.singleValueContainer()
            try value.encode(number)
        case .string(let string):
            var value = encoder.singleValueContainer()
            try value.encode(string)
        case .array(let elements):
            var array = encoder.unkeyedContainer()
            for element in elements { try array.encode(element) }
        case .object(let members):
            var object = encoder.container(keyedBy: MemberName.self)
            for (name, member) in members { try object.encode(member, forKey: MemberName(name)) }
        }
    }
}

extension JSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(Decimal(value)) }
    public init(dictionaryLiteral members: (String, JSON)...) { self = .object(Dictionary(members) { first, _ in first }) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
}

/// Any member name, as a coding key.
struct MemberName: CodingKey, Hashable {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ name: String) { stringValue = name }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
