/// Random priorities for new rows (SplitMix64): deterministic, which a treap's balance
/// does not mind.
struct PriorityGenerator {
    private var state: UInt64 = 0x9E37_79B9_7F4A_7C15

    mutating func next() -> UInt32 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return UInt32(truncatingIfNeeded: (mixed ^ (mixed >> 31)) >> 32)
    }
}
