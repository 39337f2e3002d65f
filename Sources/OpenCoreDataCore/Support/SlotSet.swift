/// A set of property slots (small integers), stored inline for entities of up to 64 properties.
package struct SlotSet: Hashable {
    private var low: UInt64 = 0
    private var high: [UInt64] = []

    init() {}

    /// The set of the slots whose bits are set in `lowWord` (slots 0 to 63).
    init(lowWord: UInt64) {
        low = lowWord
    }

    /// The set as one word, if every slot in it is below `limit` (at most 64).
    func lowWordIfOnlyBelow(_ limit: Int) -> UInt64? {
        guard high.allSatisfy({ $0 == 0 }) else { return nil }
        if limit < 64, low >> UInt64(limit) != 0 { return nil }
        return low
    }

    var isEmpty: Bool { low == 0 && high.allSatisfy { $0 == 0 } }

    @inline(__always)
    package func contains(_ slot: Int) -> Bool {
        if slot < 64 { return low & (1 << UInt64(slot)) != 0 }
        let word = slot / 64 - 1
        return word < high.count && high[word] & (1 << UInt64(slot % 64)) != 0
    }

    @inline(__always)
    mutating func insert(_ slot: Int) {
        if slot < 64 {
            low |= 1 << UInt64(slot)
            return
        }
        let word = slot / 64 - 1
        while high.count <= word { high.append(0) }
        high[word] |= 1 << UInt64(slot % 64)
    }

    mutating func remove(_ slot: Int) {
        if slot < 64 {
            low &= ~(1 << UInt64(slot))
            return
        }
        let word = slot / 64 - 1
        if word < high.count { high[word] &= ~(1 << UInt64(slot % 64)) }
    }

    mutating func removeAll() {
        low = 0
        high = []
    }

    mutating func formUnion(_ other: SlotSet) {
        low |= other.low
        while high.count < other.high.count { high.append(0) }
        for index in other.high.indices { high[index] |= other.high[index] }
    }

    /// The slots in increasing order.
    var elements: [Int] {
        var result: [Int] = []
        var bits = low
        while bits != 0 {
            let slot = bits.trailingZeroBitCount
            result.append(slot)
            bits &= bits - 1
        }
        for (index, word) in high.enumerated() {
            var bits = word
            while bits != 0 {
                result.append((index + 1) * 64 + bits.trailingZeroBitCount)
                bits &= bits - 1
            }
        }
        return result
    }
}
