/// The hash of the tables keyed by object identity or object ID — a context's registry, a store's row cache — which
/// are looked up several times for every object a fetch or save touches.
///
/// `Dictionary` runs SipHash over whatever `hash(into:)` feeds it: about a hundred instructions, more than the rest of
/// a lookup. These keys are a pointer or a row number, which need no protection against chosen collisions (nobody
/// picks the addresses of our objects, and row numbers come from the store), so a key type answers Dictionary's
/// `_rawHashValue(seed:)` with one multiply-and-shift mix of the key and the table's seed instead.
@inline(__always)
func cheapHash(_ value: Int, seed: Int) -> Int {
    var bits = UInt64(UInt(bitPattern: value ^ seed))
    bits = (bits ^ (bits &>> 32)) &* 0xD6E8_FEB8_6659_FD93
    bits = (bits ^ (bits &>> 32)) &* 0xD6E8_FEB8_6659_FD93
    return Int(truncatingIfNeeded: bits ^ (bits &>> 32))
}

/// An object's identity as a dictionary key, hashed with `cheapHash`.
package struct ObjectKey: Hashable {
    let identifier: ObjectIdentifier

    @inline(__always)
    init(_ identifier: ObjectIdentifier) {
        self.identifier = identifier
    }

    @inline(__always)
    package static func == (lhs: ObjectKey, rhs: ObjectKey) -> Bool {
        lhs.identifier == rhs.identifier
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(identifier)
    }

    @inline(__always)
    package func _rawHashValue(seed: Int) -> Int {
        cheapHash(Int(bitPattern: identifier), seed: seed)
    }
}

/// A dictionary keyed by object identity (`ObjectIdentifier`), as `[ObjectIdentifier: Value]` is, with the cheap
/// hash: the registered objects a context retains (`retainsRegisteredObjects`).
package struct ObjectIdentityDictionary<Value>: ExpressibleByDictionaryLiteral {
    private var storage: [ObjectKey: Value]

    package init() {
        storage = [:]
    }

    package init(dictionaryLiteral elements: (ObjectIdentifier, Value)...) {
        storage = Dictionary(elements.map { (ObjectKey($0.0), $0.1) }, uniquingKeysWith: { $1 })
    }

    package subscript(identifier: ObjectIdentifier) -> Value? {
        @inline(__always)
        get { storage[ObjectKey(identifier)] }
        @inline(__always)
        set { storage[ObjectKey(identifier)] = newValue }
    }

    package var count: Int { storage.count }
    package var isEmpty: Bool { storage.isEmpty }
    package var values: Dictionary<ObjectKey, Value>.Values { storage.values }

    package mutating func removeAll(keepingCapacity keepCapacity: Bool = false) {
        storage.removeAll(keepingCapacity: keepCapacity)
    }
}
