/// The name of a feed: 1 to 128 characters of `A-Z a-z 0-9 . _ -`, and not `.` or `..`,
/// which proxies normalise away as path segments (docs/feeds.md §1).
package struct FeedID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The name as the client wrote it.
    package let name: String

    /// The feed named `name`; throws ``FeedError/invalidFeedID(_:)`` for any other name.
    package init(_ name: String) throws(FeedError) {
        guard name.utf8.allSatisfy(Self.isNameByte), (1...128).contains(name.utf8.count), name != ".", name != ".." else {
            throw .invalidFeedID(name)
        }
        self.name = name
    }

    /// Whether `byte` is one of the characters of feed ids: `A-Z a-z 0-9 . _ -`.
    package static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"): true
        default: false
        }
    }

    package var description: String { name }

    /// The first text above every id that begins with `prefix` (an id's characters are
    /// ASCII, compared byte by byte): where the prefix's range of ids ends; `nil` for the
    /// empty prefix, whose range has no end.
    package static func rangeEnd(ofPrefix prefix: String) -> String? {
        guard var last = prefix.utf8.last else { return nil }
        last += 1
        return String(decoding: prefix.utf8.dropLast() + [last], as: UTF8.self)
    }

    /// Ids in the order of their UTF-8 bytes, as every store lists them.
    package static func < (lhs: FeedID, rhs: FeedID) -> Bool { lhs.name.utf8.lexicographicallyPrecedes(rhs.name.utf8) }
}
