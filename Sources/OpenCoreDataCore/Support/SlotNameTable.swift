/// The slots of an entity's properties by name: what every typed accessor and key-value coding call looks up.
///
/// A `[String: Int]` hashes the name with SipHash on every lookup, which cost more than the rest of a `@Managed`
/// getter. Property names are short and few, and most lookups pass a string literal. So the table first looks the
/// name up by its representation: a string of up to 15 UTF-8 bytes is stored inline in its 16 bytes, the same bytes
/// for the same text, and equal representations are always equal strings. Names not found that way (longer ones,
/// or text built at run time) are hashed with FNV-1a into an open-addressed array and compared with `==`.
///
/// A class, so that a lookup through an entity's cache does not copy (and retain) the table's arrays.
final class SlotNameTable: Sendable {
    private let names: [String]
    /// Indexes into `names`, or -1 for an empty bucket; the count is a power of two, at least twice the names.
    private let buckets: [Int32]
    private let mask: Int

    /// A name's representation and its index; `index` is -1 for an empty bucket.
    private struct RepresentationEntry {
        var low: UInt64 = 0
        var high: UInt64 = 0
        var index: Int32 = -1
    }

    /// The representations of the names as the shortest strings that hold them (inline where they fit), open-addressed
    /// like `buckets`.
    private let representations: [RepresentationEntry]
    /// The strings whose representations are in `representations`, kept so that a name held out of line keeps its
    /// storage (and so its address can never come to mean another text).
    private let canonicalNames: [String]

    init(_ names: [String]) {
        var count = 8
        while count < names.count * 2 { count *= 2 }
        var buckets = [Int32](repeating: -1, count: count)
        var representations = [RepresentationEntry](repeating: RepresentationEntry(), count: count)
        var unique: [String] = []
        var canonicalNames: [String] = []
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
            guard isNew else { continue }
            buckets[bucket] = Int32(unique.count)
            // Rebuilt from its bytes, a short name takes the inline form that a literal of the same text has.
            let canonical = String(decoding: Array(name.utf8), as: UTF8.self)
            if let (low, high) = stringRepresentation(canonical) {
                var slot = stringRepresentationHash(low, high) & (count - 1)
                while representations[slot].index >= 0 { slot = (slot + 1) & (count - 1) }
                representations[slot] = RepresentationEntry(low: low, high: high, index: Int32(unique.count))
            }
            canonicalNames.append(canonical)
            unique.append(name)
        }
        self.names = unique
        self.buckets = buckets
        self.representations = representations
        self.canonicalNames = canonicalNames
        mask = count - 1
    }

    /// The position of `name` among the names the table was made with.
    @inline(__always)
    subscript(name: String) -> Int? {
        if let (low, high) = stringRepresentation(name) {
            var slot = stringRepresentationHash(low, high) & mask
            while true {
                let entry = representations[slot]
                if entry.index < 0 { break }
                if entry.low == low, entry.high == high { return Int(entry.index) }
                slot = (slot + 1) & mask
            }
        }
        return position(hashing: name)
    }

    /// The position of `name`, found by its text: for names not found by their representation.
    @inline(never)
    private func position(hashing name: String) -> Int? {
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

/// The two words a string value is made of, on platforms where it is two words. Equal words mean equal strings: a
/// string of up to 15 UTF-8 bytes is those bytes, a longer one a reference to its storage (which must be kept alive
/// by whoever compares by it, so that its address cannot come to hold another text).
@inline(__always)
func stringRepresentation(_ string: String) -> (UInt64, UInt64)? {
    guard MemoryLayout<String>.size == 16 else { return nil }
    return withUnsafeBytes(of: string) { bytes in
        (
            bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
            bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
        )
    }
}

@inline(__always)
func stringRepresentationHash(_ low: UInt64, _ high: UInt64) -> Int {
    let mixed = (low ^ (high &* 0x9E37_79B9_7F4A_7C15)) &* 0xD6E8_FEB8_6659_FD93
    return Int(truncatingIfNeeded: mixed ^ (mixed &>> 29))
}
