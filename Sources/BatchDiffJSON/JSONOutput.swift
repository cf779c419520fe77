/// A JSON text being written, value by value, without intermediate objects.
///
/// The writer places the commas and colons itself: inside an object, ``key(_:)`` names the
/// next member and one value follows it; inside an array, values follow one another. So the
/// answers built with it are valid JSON by construction:
///
/// ```swift
/// var output = JSONOutput()
/// output.object { output in
///     output.key("feed")
///     output.string("prices")
///     output.key("versions")
///     output.array([1, 2]) { $0.integer($1) }
/// }
/// // {"feed":"prices","versions":[1,2]}
/// ```
public struct JSONOutput: Sendable {
    /// The text written so far.
    public private(set) var bytes: [UInt8] = []
    /// Whether the next value or key follows a sibling and needs a comma before it.
    private var followsSibling = false

    /// An empty text with room for `capacity` bytes.
    public init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    /// Appends `{`, the members that `writeMembers` writes, and `}`.
    public mutating func object(_ writeMembers: (inout JSONOutput) throws -> Void) rethrows {
        open(UInt8(ascii: "{"))
        try writeMembers(&self)
        close(UInt8(ascii: "}"))
    }

    /// Appends `[a,b,...]`, writing each element with `write`.
    public mutating func array<Elements: Sequence>(_ elements: Elements, _ write: (inout JSONOutput, Elements.Element) throws -> Void) rethrows {
        open(UInt8(ascii: "["))
        for element in elements {
            try write(&self, element)
        }
        close(UInt8(ascii: "]"))
    }

    /// Names the next member of the object being written (names are plain ASCII).
    public mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        append(name)
        append("\":")
        followsSibling = false
    }

    /// Names the next member with a name in JSON text as it was read (quotes and escapes included).
    public mutating func key<Bytes: Sequence<UInt8>>(text: Bytes) {
        separate()
        append(text: text)
        bytes.append(UInt8(ascii: ":"))
        followsSibling = false
    }

    /// Appends a value that is already JSON text (a value as it was read, or a document's part).
    public mutating func value<Bytes: Sequence<UInt8>>(text: Bytes) {
        separate()
        append(text: text)
        followsSibling = true
    }

    /// Appends `text` at once when its bytes are contiguous (an array, or a slice of one):
    /// called from another module, the generic `append(contentsOf:)` copies a byte at a
    /// time through the sequence's witness, a third of a feed answer's time.
    private mutating func append<Bytes: Sequence<UInt8>>(text: Bytes) {
        let copied: Void? = text.withContiguousStorageIfAvailable { bytes.append(contentsOf: $0) }
        if copied == nil { bytes.append(contentsOf: text) }
    }

    /// Appends an integer.
    public mutating func integer(_ value: Int) {
        separate()
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
        followsSibling = true
    }

    /// Appends `true` or `false`.
    public mutating func bool(_ value: Bool) {
        separate()
        value ? append("true") : append("false")
        followsSibling = true
    }

    /// Appends `null`.
    public mutating func null() {
        separate()
        append("null")
        followsSibling = true
    }

    /// Appends `text` as a JSON string, escaping what must be escaped.
    public mutating func string(_ text: String) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): append("\\\"")
            case UInt8(ascii: "\\"): append("\\\\")
            case UInt8(ascii: "\n"): append("\\n")
            case UInt8(ascii: "\r"): append("\\r")
            case UInt8(ascii: "\t"): append("\\t")
            case ..<0x20:
                append("\\u00")
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
        followsSibling = true
    }

    /// Appends `[first,second]` (an index path), without a sequence to walk.
    mutating func pair(_ first: Int, _ second: Int) {
        open(UInt8(ascii: "["))
        integer(first)
        integer(second)
        close(UInt8(ascii: "]"))
    }

    /// Appends a line break after a finished document (for files and terminals).
    public mutating func newline() {
        bytes.append(UInt8(ascii: "\n"))
    }

    private mutating func separate() {
        if followsSibling { bytes.append(UInt8(ascii: ",")) }
    }

    private mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        followsSibling = false
    }

    private mutating func close(_ bracket: UInt8) {
        bytes.append(bracket)
        followsSibling = true
    }

    private mutating func append(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
}

extension JSONOutput {
    /// Appends the object `value` without its first member named `excluded` (as the
    /// collection reader leaves a section's first `items` out of its header), members as written.
    public mutating func object(_ value: JSONValue, without excluded: String) {
        let members = value.members
        let excluded = Fingerprint.string(excluded)
        let skipped = members.firstIndex { $0.key.fingerprint == excluded }
        object { output in
            for (index, (key, member)) in members.enumerated() where index != skipped {
                output.key(text: key.text)
                output.value(text: member.text)
            }
        }
    }
}
