/// A dictionary keyed by object IDs, for the tables that hold one entry per object: a context's registry, a store's
/// row cache, the versions of a save.
///
/// A `[NSManagedObjectID: Value]` compares keys through `NSObject`'s `==`, which boxes the other ID in `Any` and casts
/// it back in `isEqual(_:)`; with 100,000 objects that comparison cost more than the SQL. This table compares IDs
/// with `_isEqual(to:)` and mixes their precomputed hash with `cheapHash` instead of SipHash. Same semantics,
/// subscripts and iteration as a dictionary.
package struct ObjectIDDictionary<Value>: ExpressibleByDictionaryLiteral, Sequence {
    package typealias Key = NSManagedObjectID

    package struct IDKey: Hashable {
        let objectID: NSManagedObjectID

        @inline(__always)
        package static func == (lhs: IDKey, rhs: IDKey) -> Bool {
            lhs.objectID._isEqual(to: rhs.objectID)
        }

        @inline(__always)
        package func hash(into hasher: inout Hasher) {
            hasher.combine(objectID._hashValue)
        }

        @inline(__always)
        package func _rawHashValue(seed: Int) -> Int {
            cheapHash(objectID._hashValue, seed: seed)
        }
    }

    private var storage: [IDKey: Value]

    package init() {
        storage = [:]
    }

    package init(dictionaryLiteral elements: (NSManagedObjectID, Value)...) {
        storage = Dictionary(elements.map { (IDKey(objectID: $0.0), $0.1) }, uniquingKeysWith: { $1 })
    }

    package subscript(objectID: NSManagedObjectID) -> Value? {
        @inline(__always)
        get { storage[IDKey(objectID: objectID)] }
        @inline(__always)
        set { storage[IDKey(objectID: objectID)] = newValue }
    }

    package var count: Int { storage.count }
    package var isEmpty: Bool { storage.isEmpty }
    package var values: Dictionary<IDKey, Value>.Values { storage.values }
    package var keys: LazyMapSequence<Dictionary<IDKey, Value>.Keys, NSManagedObjectID> {
        storage.keys.lazy.map(\.objectID)
    }

    @discardableResult
    package mutating func removeValue(forKey objectID: NSManagedObjectID) -> Value? {
        storage.removeValue(forKey: IDKey(objectID: objectID))
    }

    /// Makes room for `minimumCapacity` entries in all, so that adding many does not rehash the table again and again.
    package mutating func reserveCapacity(_ minimumCapacity: Int) {
        storage.reserveCapacity(minimumCapacity)
    }

    package mutating func removeAll(keepingCapacity keepCapacity: Bool = false) {
        storage.removeAll(keepingCapacity: keepCapacity)
    }

    package mutating func merge(_ other: ObjectIDDictionary<Value>, uniquingKeysWith combine: (Value, Value) -> Value) {
        storage.merge(other.storage, uniquingKeysWith: combine)
    }

    package func makeIterator() -> some IteratorProtocol<(key: NSManagedObjectID, value: Value)> {
        storage.lazy.map { (key: $0.key.objectID, value: $0.value) }.makeIterator()
    }
}
