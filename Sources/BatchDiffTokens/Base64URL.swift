/// Base64url without padding (RFC 4648 §5), as JSON Web Tokens and keys write bytes.
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static let values: [UInt8] = {
        var values = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in alphabet.enumerated() { values[Int(byte)] = UInt8(value) }
        return values
    }()

    /// The bytes `text` encodes; `nil` for any byte outside the alphabet (padding included)
    /// or a length no encoding has.
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in text {
            let value = values[Int(byte)]
            guard value != 0xFF else { return nil }
            buffer = buffer << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        // The bits left over must be zero, so that each text has one decoding.
        guard buffer & (1 << UInt32(bits) - 1) == 0 else { return nil }
        return bytes
    }

    /// `bytes` encoded.
    static func encode(_ bytes: some Collection<UInt8>) -> String {
        var text: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                text.append(alphabet[Int(buffer >> UInt32(bits) & 63)])
            }
        }
        if bits > 0 { text.append(alphabet[Int(buffer << UInt32(6 - bits) & 63)]) }
        return String(decoding: text, as: UTF8.self)
    }
}
