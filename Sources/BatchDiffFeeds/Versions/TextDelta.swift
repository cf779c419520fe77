#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// A text written as pieces of another text (its base) and bytes of its own: how a version
/// is kept as its change from a neighbouring version, in room proportional to what changed
/// (docs/feeds.md §11). Rows whose text the base holds are copied from it, runs of them at
/// once; every other byte (changed rows, and the punctuation and headers between runs) is
/// kept as is.
package struct TextDelta: Sendable, Equatable {
    /// One piece of the text: bytes of the base, or bytes of ``literals``.
    enum Piece: Sendable, Equatable {
        case copy(Range<Int>)
        case literal(Range<Int>)

        var count: Int {
            switch self {
            case .copy(let range), .literal(let range): range.count
            }
        }
    }

    private(set) var pieces: [Piece] = []
    private(set) var literals: [UInt8] = []
    /// The length of the base it applies to.
    package let baseCount: Int
    /// The length of the text it makes.
    package private(set) var count = 0

    private init(baseCount: Int) { self.baseCount = baseCount }

    /// The delta of the text `target` from the text `base`, whose rows stand at `rows`:
    /// row `i` of the target is the base's row `sources[i]` when that is not `nil` and the
    /// two texts are the same bytes.
    package init(target: (text: [UInt8], rows: [Range<Int>]), base: (text: [UInt8], rows: [Range<Int>]), sources: [Int?]) {
        precondition(sources.count == target.rows.count, "one source per row")
        self.init(baseCount: base.text.count)
        var cursor = 0
        for (row, span) in target.rows.enumerated() {
            let gap = cursor..<span.lowerBound
            if let source = sources[row], Self.equal(target.text, span, base.text, base.rows[source]) {
                copy(base.rows[source], after: gap, of: target.text, base: base.text)
            } else {
                append(literal: target.text[gap.lowerBound..<span.upperBound])
            }
            cursor = span.upperBound
        }
        // The rest (closing brackets): from the base too, when it follows the last copy there.
        let rest = cursor..<target.text.count
        if case .copy(let last)? = pieces.last, Self.equal(target.text, rest, base.text, last.upperBound..<min(base.text.count, last.upperBound + rest.count)) {
            pieces[pieces.count - 1] = .copy(last.lowerBound..<last.upperBound + rest.count)
            count += rest.count
        } else {
            append(literal: target.text[rest])
        }
        trimCapacity()
    }

    /// An empty delta over a base of `baseCount` bytes, written piece by piece
    /// (``append(copying:)``, ``append(literal:)``) by one who knows where the pieces are.
    init(over baseCount: Int) { self.init(baseCount: baseCount) }

    /// Adds the base's bytes `range`.
    mutating func append(copying range: Range<Int>) {
        guard !range.isEmpty else { return }
        append(.copy(range))
    }

    /// Adds `bytes` of its own.
    mutating func append(literal bytes: some Collection<UInt8>) {
        guard !bytes.isEmpty else { return }
        literals += bytes
        append(.literal(literals.count - bytes.count..<literals.count))
    }

    /// Drops the room growing left in the arrays: a delta is kept long.
    mutating func trimCapacity() {
        if literals.capacity > literals.count { literals = literals.withUnsafeBufferPointer { Array($0) } }
        if pieces.capacity > pieces.count { pieces = pieces.withUnsafeBufferPointer { Array($0) } }
    }

    /// Adds the base's `source` after the target's bytes `gap`, the gap copied with it when
    /// the base has the same bytes just before it (so a run of rows, and the headers between
    /// them, is one copy), else kept as is.
    private mutating func copy(_ source: Range<Int>, after gap: Range<Int>, of target: [UInt8], base: [UInt8]) {
        if gap.count <= source.lowerBound, Self.equal(target, gap, base, source.lowerBound - gap.count..<source.lowerBound) {
            append(.copy(source.lowerBound - gap.count..<source.upperBound))
        } else {
            append(literal: target[gap])
            append(.copy(source))
        }
    }

    /// Adds `piece`, merged with the last when they are contiguous.
    private mutating func append(_ piece: Piece) {
        count += piece.count
        switch (pieces.last, piece) {
        case (.literal(let last)?, .literal(let next)) where last.upperBound == next.lowerBound:
            pieces[pieces.count - 1] = .literal(last.lowerBound..<next.upperBound)
        case (.copy(let last)?, .copy(let next)) where last.upperBound == next.lowerBound:
            pieces[pieces.count - 1] = .copy(last.lowerBound..<next.upperBound)
        default:
            pieces.append(piece)
        }
    }

    /// The text this delta makes of `base`.
    package func applied(to base: [UInt8]) throws(TextDeltaError) -> [UInt8] {
        guard base.count == baseCount else { throw TextDeltaError("a delta of a \(baseCount)-byte text applied to \(base.count) bytes") }
        var text: [UInt8] = []
        text.reserveCapacity(count)
        for piece in pieces {
            switch piece {
            case .copy(let range): text += base[range]
            case .literal(let range): text += literals[range]
            }
        }
        return text
    }

    /// This delta (from a middle text) after `earlier` (which makes that middle text from
    /// its base): one delta from `earlier`'s base, its pieces no more than both together.
    package func composed(after earlier: TextDelta) throws(TextDeltaError) -> TextDelta {
        guard earlier.count == baseCount else { throw TextDeltaError("deltas that do not follow one another: \(earlier.count) and \(baseCount) bytes") }
        var composed = TextDelta(baseCount: earlier.baseCount)
        // Where each of the earlier pieces starts in the middle text.
        var starts: [Int] = []
        starts.reserveCapacity(earlier.pieces.count)
        var offset = 0
        for piece in earlier.pieces {
            starts.append(offset)
            offset += piece.count
        }
        for piece in pieces {
            switch piece {
            case .literal(let range): composed.append(literal: literals[range])
            case .copy(let range):
                // The earlier pieces this range of the middle text falls in.
                var index = Self.lastIndex(in: starts, atOrBelow: range.lowerBound)
                var position = range.lowerBound
                while position < range.upperBound {
                    let start = starts[index]
                    let end = min(range.upperBound, start + earlier.pieces[index].count)
                    switch earlier.pieces[index] {
                    case .copy(let source): composed.append(.copy(source.lowerBound + position - start..<source.lowerBound + end - start))
                    case .literal(let source): composed.append(literal: earlier.literals[source.lowerBound + position - start..<source.lowerBound + end - start])
                    }
                    position = end
                    index += 1
                }
            }
        }
        composed.trimCapacity()
        return composed
    }

    /// The text `changes` make of `text`, applied in order (each a change of the text the
    /// one before it made): composed into one first, so that the text is copied once, and
    /// composed pairwise, neighbours with neighbours, so that a chain of k changes costs
    /// its pieces times log k rather than k times its pieces.
    package static func text(applying changes: some Sequence<TextDelta>, to text: [UInt8]) throws(TextDeltaError) -> [UInt8] {
        var level = Array(changes)
        while level.count > 1 {
            var next: [TextDelta] = []
            next.reserveCapacity((level.count + 1) / 2)
            for first in stride(from: 0, to: level.count, by: 2) {
                next.append(first + 1 < level.count ? try level[first + 1].composed(after: level[first]) : level[first])
            }
            level = next
        }
        return try level.first?.applied(to: text) ?? text
    }

    /// The bytes the delta holds.
    package var byteCount: Int { literals.capacity + pieces.capacity * MemoryLayout<Piece>.stride + 96 }

    private static func lastIndex(in starts: [Int], atOrBelow offset: Int) -> Int {
        var (low, high) = (0, starts.count - 1)
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= offset { low = middle } else { high = middle - 1 }
        }
        return low
    }

    /// Whether `a[aRange]` and `b[bRange]` are the same bytes.
    private static func equal(_ a: [UInt8], _ aRange: Range<Int>, _ b: [UInt8], _ bRange: Range<Int>) -> Bool {
        guard aRange.count == bRange.count else { return false }
        return a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                aRange.isEmpty || memcmp(a.baseAddress! + aRange.lowerBound, b.baseAddress! + bRange.lowerBound, aRange.count) == 0
            }
        }
    }
}

extension TextDelta {
    /// The delta as bytes, for a store: a format byte, the two lengths, each piece (a copy as
    /// its start and length, a literal as its length), then the literal bytes; numbers as
    /// LEB128 varints.
    package var encoded: [UInt8] {
        var bytes: [UInt8] = [1]
        bytes.reserveCapacity(literals.count + pieces.count * 6 + 16)
        Varint.append(baseCount, to: &bytes)
        Varint.append(count, to: &bytes)
        Varint.append(pieces.count, to: &bytes)
        for piece in pieces {
            switch piece {
            case .copy(let range):
                bytes.append(0)
                Varint.append(range.lowerBound, to: &bytes)
                Varint.append(range.count, to: &bytes)
            case .literal(let range):
                bytes.append(1)
                Varint.append(range.count, to: &bytes)
            }
        }
        bytes += literals
        // Kept long (a store's row, a past version in memory): no room to spare.
        return bytes.capacity > bytes.count ? bytes.withUnsafeBufferPointer { Array($0) } : bytes
    }

    /// A delta read from ``encoded`` bytes; ``TextDeltaError`` for bytes that are not one.
    package init(encoded bytes: [UInt8]) throws(TextDeltaError) {
        var reader = VarintReader(bytes: bytes) { TextDeltaError("a delta \($0)") }
        guard try reader.byte() == 1 else { throw TextDeltaError("not a delta of a known format") }
        self.init(baseCount: try reader.varint())
        let count = try reader.varint()
        // Texts are under 2 GiB (a span is 32 bits): damaged lengths are refused before
        // anything is added up or allocated.
        guard baseCount <= Int32.max, count <= Int32.max else { throw TextDeltaError("a delta of a text over 2 GiB") }
        let pieceCount = try reader.varint()
        guard pieceCount <= bytes.count else { throw TextDeltaError("a delta of more pieces than bytes") }
        var literalCount = 0
        for _ in 0..<pieceCount {
            switch try reader.byte() {
            case 0:
                let start = try reader.varint()
                let length = try reader.varint()
                guard start <= baseCount, length <= baseCount - start else { throw TextDeltaError("a copy outside the base") }
                pieces.append(.copy(start..<start + length))
            case 1:
                let length = try reader.varint()
                guard length <= bytes.count else { throw TextDeltaError("a literal longer than the delta") }
                pieces.append(.literal(literalCount..<literalCount + length))
                literalCount += length
            default: throw TextDeltaError("an unknown piece")
            }
        }
        literals = Array(bytes[reader.offset...])
        var total = 0
        for piece in pieces where total <= count { total += piece.count }  // each piece is at most 2^31
        guard literals.count == literalCount, total == count else { throw TextDeltaError("a delta whose lengths do not add up") }
        self.count = count
    }
}

/// A delta that does not fit the text it is applied to, or bytes that are not a delta.
package struct TextDeltaError: Error, CustomStringConvertible {
    /// What does not fit.
    package let description: String
    init(_ description: String) { self.description = description }
}
