/// A JSON text being written, byte by byte, without intermediate objects.
public struct JSONOutput: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    /// Appends JSON text as it is (punctuation, literals, or a value's original text).
    public mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    public mutating func raw<Bytes: Sequence<UInt8>>(_ text: Bytes) {
        bytes.append(contentsOf: text)
    }

    public mutating func integer(_ value: Int) {
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
        }
        var magnitude = value.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            bytes.append(contentsOf: buffer[(20 - count)...])
        }
    }

    public mutating func bool(_ value: Bool) {
        value ? raw("true") : raw("false")
    }

    /// Appends `text` as a JSON string, escaping what must be escaped.
    public mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case UInt8(ascii: "\n"): raw("\\n")
            case UInt8(ascii: "\r"): raw("\\r")
            case UInt8(ascii: "\t"): raw("\\t")
            case ..<0x20:
                raw("\\u00")
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends `"name":` (names are plain ASCII).
    public mutating func key(_ name: StaticString) {
        bytes.append(UInt8(ascii: "\""))
        raw(name)
        raw("\":")
    }

    /// Appends `[a,b,...]`, writing each element with `write`.
    public mutating func array<Elements: Sequence>(_ elements: Elements, _ write: (inout JSONOutput, Elements.Element) -> Void) {
        bytes.append(UInt8(ascii: "["))
        var first = true
        for element in elements {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            write(&self, element)
        }
        bytes.append(UInt8(ascii: "]"))
    }
}

extension JSONOutput {
    /// Appends the object `value` without its first member named `excluded` (as the
    /// collection reader leaves a section's first `items` out of its header), members as written.
    public mutating func object(_ value: JSONValue, without excluded: String) {
        raw("{")
        var first = true
        let members = value.members
        let skipped = members.firstIndex { $0.key.string == excluded }
        for (index, (key, member)) in members.enumerated() where index != skipped {
            if !first { raw(",") }
            first = false
            raw(key.text)
            raw(":")
            raw(member.text)
        }
        raw("}")
    }
}
