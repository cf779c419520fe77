/// Marks the elements of a longest strictly increasing subsequence of `values`
/// (patience sorting, O(n log n)).
///
/// The differ keeps these elements in place: every other element must move, so marking a
/// longest such subsequence makes the moves as few as the matching allows.
///
/// When the values are distinct and all lie in `range`, a run at the front equal to the
/// range's first values (in order), and one at the back equal to its last values, are in a
/// longest subsequence: no other value goes below the one or above the other. They are
/// marked without search (a list that kept its front and back: most of it, usually).
func longestIncreasingSubsequence(_ values: [Int], within range: Range<Int>? = nil) -> [Bool] {
    var front = 0
    var back = values.count
    if let range {
        while front < back, values[front] == range.lowerBound + front { front += 1 }
        while back > front, values[back - 1] == range.upperBound - (values.count - back) - 1 { back -= 1 }
    }
    var tails: [Int] = []  // tails[k]: index in `values` of the smallest tail of a run of length k + 1
    tails.reserveCapacity(back - front)
    // values[tails[k]], searched where they lie together rather than read all over `values`.
    var tailValues: [Int] = []
    tailValues.reserveCapacity(back - front)
    // For each index from `front`, the one before it in its run, or -1.
    var predecessor = [Int](filling: -1, count: back - front)
    predecessor.withUnsafeMutableBufferPointer { predecessor in  // (no uniqueness check per element)
        for index in front..<back {
            let value = values[index]
            var low = 0
            var high = tails.count
            if let last = tailValues.last, last < value { low = high }  // the common case: extends the longest run
            while low < high {
                let middle = (low + high) / 2
                if tailValues[middle] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { predecessor[index - front] = tails[low - 1] }
            if low == tails.count {
                tails.append(index)
                tailValues.append(value)
            } else {
                tails[low] = index
                tailValues[low] = value
            }
        }
    }
    var marked = [Bool](filling: false, count: values.count)
    marked.withUnsafeMutableBufferPointer { marked in
        for index in 0..<front { marked[index] = true }
        for index in back..<values.count { marked[index] = true }
        var cursor = tails.last ?? -1
        while cursor >= 0 {
            marked[cursor] = true
            cursor = predecessor[cursor - front]
        }
    }
    return marked
}

/// Marks the elements of a strictly increasing subsequence of `values` (distinct integers
/// in `0..<values.count`-like ranges, all non-negative) with the largest total `weights`.
/// O(n log n) with a Fenwick tree of prefix maxima.
func heaviestIncreasingSubsequence(_ values: [Int], weights: [Int]) -> [Bool] {
    let size = (values.max() ?? -1) + 1
    var best = [(weight: Int, index: Int)](filling: (0, -1), count: size + 1)  // Fenwick tree over values
    var predecessor = [Int](filling: -1, count: values.count)
    var total = [Int](filling: 0, count: values.count)
    for (index, value) in values.enumerated() {
        var prefix = (weight: 0, index: -1)
        var position = value  // the maximum over values below `value`
        while position > 0 {
            if best[position].weight > prefix.weight { prefix = best[position] }
            position -= position & -position
        }
        predecessor[index] = prefix.index
        total[index] = prefix.weight + weights[index]
        position = value + 1
        while position <= size {
            if total[index] > best[position].weight { best[position] = (total[index], index) }
            position += position & -position
        }
    }
    var marked = [Bool](filling: false, count: values.count)
    var cursor = total.indices.max { total[$0] < total[$1] } ?? -1
    while cursor >= 0 {
        marked[cursor] = true
        cursor = predecessor[cursor]
    }
    return marked
}
