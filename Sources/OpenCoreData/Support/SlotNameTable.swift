/// The slots of an entity's properties by name: what every typed accessor and key-value coding call looks up.
///
/// A `[String: Int]` hashes the name with SipHash on every lookup, which cost more than the rest of a `@Managed`
/// getter. Property names are short and few: this table hashes their UTF-8 bytes with FNV-1a into an open-addressed
/// array built once per entity, and compares the name found with `==`.
struct SlotNameTable {
    private let names: [String]
    /// Indexes into `names`, or -1 for an empty bucket; the count is a power of two, at least twice the names.
    private let buckets: [Int32]
    private let mask: Int

    init(_ names: [String]) {
        var count = 8
        while count < names.count * 2 { count *= 2 }
        var buckets = [Int32](repeating: -1, count: count)
        var unique: [String] = []
        for name in names {
            var bucket = Self.hash(name) & (count - 1)
            var isNew = true
            while buckets[bucket] >= 0 {
                if unique[Int(buckets[bucket])] == name {
                    isNew = false
                    break
                }
                bucket = (bucket + 1) & (count - 1)
            }
            if isNew {
                buckets[bucket] = Int32(unique.count)
                unique.append(name)
            }
        }
        self.names = unique
        self.buckets = buckets
        mask = count - 1
    }

    /// The position of `name` among the names the table was made with.
    subscript(name: String) -> Int? {
        var bucket = Self.hash(name) & mask
        while true {
            let index = buckets[bucket]
            if index < 0 { return nil }
            if names[Int(index)] == name { return Int(index) }
            bucket = (bucket + 1) & mask
        }
    }

    /// The names, in the order they were given.
    var keys: [String] { names }

    @inline(__always)
    private static func hash(_ name: String) -> Int {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        var name = name
        name.withUTF8 { bytes in
            for byte in bytes {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            }
        }
        return Int(truncatingIfNeeded: hash ^ (hash >> 29))
    }
}
