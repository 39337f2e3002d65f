/// A dictionary keyed by object IDs, for the tables that hold one entry per object: a context's registry, a store's
/// row cache, the versions of a save. Same semantics, subscripts and iteration as a dictionary (and value semantics:
/// a copy is made when a shared table is changed).
///
/// Not a `[NSManagedObjectID: Value]`:
/// - that compares keys through `NSObject`'s `==`, which boxes the other ID in `Any` and casts it back in
///   `isEqual(_:)`, and hashes them with SipHash; this table compares IDs with `_isEqual(to:)` and mixes their
///   precomputed hash with `cheapHash`;
/// - a `Dictionary` fills at most 3/4 of its buckets and doubles, so 100,000 entries take 262,144 buckets; this
///   table fills up to 4/5 (linear probing, later entries of a run moved back on removal), so the same entries take
///   half the memory — for a row cache, 45 bytes per object instead of 84. A byte per bucket holds seven bits of the
///   key's hash, so a probe compares bytes and looks at a key only when they match; another holds how far the entry
///   lies from its home bucket, so a removal moves entries back without looking at their keys.
package struct ObjectIDDictionary<Value>: ExpressibleByDictionaryLiteral, Sequence {
    package typealias Key = NSManagedObjectID

    fileprivate var storage: ObjectIDTableStorage<Value>?

    package init() {
        storage = nil
    }

    package init(dictionaryLiteral elements: (NSManagedObjectID, Value)...) {
        self.init()
        for (key, value) in elements { self[key] = value }
    }

    package var count: Int { storage?.count ?? 0 }
    package var isEmpty: Bool { count == 0 }

    package subscript(objectID: NSManagedObjectID) -> Value? {
        get { storage?.value(for: objectID) }
        set {
            if let newValue {
                makeUnique(adding: 1)
                storage.unsafelyUnwrapped.insert(objectID, newValue)
            } else {
                removeValue(forKey: objectID) { _ in true }
            }
        }
    }

    @discardableResult
    package mutating func removeValue(forKey objectID: NSManagedObjectID) -> Value? {
        var old: Value?
        removeValue(forKey: objectID) { value in
            old = value
            return true
        }
        return old
    }

    /// Removes the entry of `objectID` if `shouldRemove` says so, given its value in place (so that it can tell
    /// whether the value is referenced from anywhere else without adding a reference of its own).
    package mutating func removeValue(forKey objectID: NSManagedObjectID, where shouldRemove: (inout Value) -> Bool) {
        // The common case, a table of this value's own, takes one probe: the bucket found is the one emptied. A
        // shared table is copied first (if it holds the key), and the key looked up in the copy, where its bucket
        // may differ. (No binding of `storage` may outlive the uniqueness check: it would defeat it.)
        if !isKnownUniquelyReferenced(&storage) {
            guard storage?.find(objectID).found != nil else { return }
            makeUnique(adding: 0)
        }
        let table = storage.unsafelyUnwrapped
        guard let bucket = table.find(objectID).found, shouldRemove(&table.entries[bucket].value) else { return }
        table.remove(at: bucket)
    }

    /// A key's hash as the table uses it (see `removeObjects(_:)`).
    @inline(__always)
    package static func hash(of key: NSManagedObjectID) -> Int {
        cheapHash(key._hashValue, seed: 0)
    }

    /// Makes room for `minimumCapacity` entries in all, so that adding many does not grow the table again and again.
    package mutating func reserveCapacity(_ minimumCapacity: Int) {
        let needed = Swift.max(minimumCapacity, count)
        let current = storage?.capacity ?? 0
        let unique = isKnownUniquelyReferenced(&storage)
        if unique, current >= needed { return }
        // At least doubling when it must grow, so that reserving a little more again and again stays linear.
        let grown = needed > current ? Swift.max(needed, (storage?.bucketCount ?? 0) * 2 * 4 / 5) : current
        storage = ObjectIDTableStorage.copy(of: storage, minimumCapacity: grown, moving: unique)
    }

    package mutating func removeAll(keepingCapacity keepCapacity: Bool = false) {
        guard let current = storage else { return }
        if keepCapacity {
            storage = ObjectIDTableStorage(minimumCapacity: current.capacity)
        } else {
            storage = nil
        }
    }

    package mutating func merge(_ other: ObjectIDDictionary<Value>, uniquingKeysWith combine: (Value, Value) -> Value) {
        for (key, value) in other {
            if let existing = self[key] {
                self[key] = combine(existing, value)
            } else {
                self[key] = value
            }
        }
    }

    /// The values, in the table's order.
    package var values: [Value] {
        var result: [Value] = []
        result.reserveCapacity(count)
        for (_, value) in self { result.append(value) }
        return result
    }

    /// The keys, in the table's order.
    package var keys: [NSManagedObjectID] {
        var result: [NSManagedObjectID] = []
        result.reserveCapacity(count)
        for (key, _) in self { result.append(key) }
        return result
    }

    package func makeIterator() -> Iterator {
        Iterator(storage: storage)
    }

    /// The entries, in the table's order; a table changed while it is iterated is copied, so the iteration sees it as
    /// it was.
    package struct Iterator: IteratorProtocol {
        private let storage: ObjectIDTableStorage<Value>?
        private var bucket = 0

        fileprivate init(storage: ObjectIDTableStorage<Value>?) {
            self.storage = storage
        }

        package mutating func next() -> (key: NSManagedObjectID, value: Value)? {
            guard let storage else { return nil }
            while bucket < storage.bucketCount {
                defer { bucket += 1 }
                if storage.tags[bucket] != 0 {
                    return storage.entries[bucket]
                }
            }
            return nil
        }
    }

    /// Makes the storage this value's own, with room for `adding` more entries.
    fileprivate mutating func makeUnique(adding: Int) {
        let needed = count + adding
        let unique = isKnownUniquelyReferenced(&storage)
        if unique, needed <= (storage?.capacity ?? 0) { return }
        let grown = storage.map { needed > $0.capacity ? $0.bucketCount * 2 * 4 / 5 : $0.capacity } ?? 6
        storage = ObjectIDTableStorage.copy(of: storage, minimumCapacity: Swift.max(needed, grown), moving: unique)
    }
}

/// The buckets of an `ObjectIDDictionary`: a tag per bucket says whether it holds an entry (a key and its value).
/// The number of buckets is a power of two.
final class ObjectIDTableStorage<Value> {
    let bucketCount: Int
    fileprivate let mask: Int
    /// How many entries fit before the table must grow: 4/5 of the buckets.
    let capacity: Int
    fileprivate(set) var count = 0
    /// Per bucket: 0 if empty, else 0x80 and seven bits of the key's hash.
    fileprivate let tags: UnsafeMutablePointer<UInt8>
    /// Per occupied bucket: how many buckets after its key's home bucket it lies, or 255 for that many or more.
    private let distances: UnsafeMutablePointer<UInt8>
    /// Initialized exactly where the tag is not 0. A key and its value side by side: a lookup, which compares the
    /// key and then reads the value, misses the cache once instead of twice in a table too large for it.
    let entries: UnsafeMutablePointer<(key: NSManagedObjectID, value: Value)>

    init(minimumCapacity: Int) {
        var buckets = 8
        while buckets * 4 / 5 < minimumCapacity { buckets *= 2 }
        bucketCount = buckets
        mask = buckets - 1
        capacity = buckets * 4 / 5
        tags = .allocate(capacity: buckets)
        tags.initialize(repeating: 0, count: buckets)
        distances = .allocate(capacity: buckets)
        entries = .allocate(capacity: buckets)
    }

    deinit {
        // Only the occupied buckets hold anything to destroy (and a table whose entries moved out holds nothing).
        // The key and the value are destroyed one by one rather than as a tuple: this code is not specialized for
        // `Value`, and destroying a `(key, value)` tuple looks the tuple's type up in the runtime's metadata for
        // every entry. A value that owns nothing (the registry's unretained references) needs no destroying at all.
        let valueIsTrivial = _isPOD(Value.self)
        let valueOffset = MemoryLayout<(key: NSManagedObjectID, value: Value)>.size - MemoryLayout<Value>.size
        var bucket = 0
        var remaining = count
        while remaining > 0, bucket < bucketCount {
            if tags[bucket] != 0 {
                let entry = UnsafeMutableRawPointer(entries + bucket)
                entry.assumingMemoryBound(to: NSManagedObjectID.self).deinitialize(count: 1)
                if !valueIsTrivial {
                    (entry + valueOffset).assumingMemoryBound(to: Value.self).deinitialize(count: 1)
                }
                remaining -= 1
            }
            bucket += 1
        }
        entries.deallocate()
        distances.deallocate()
        tags.deallocate()
    }

    /// A table with `source`'s entries and room for `minimumCapacity`; with `moving`, the entries are moved out of
    /// `source` (which nothing else may be using) instead of copied, and it is left empty.
    static func copy(of source: ObjectIDTableStorage?, minimumCapacity: Int, moving: Bool = false)
        -> ObjectIDTableStorage
    {
        let table = ObjectIDTableStorage(minimumCapacity: minimumCapacity)
        guard let source else { return table }
        for bucket in 0..<source.bucketCount where source.tags[bucket] != 0 {
            if moving {
                table.insertMoving(from: source, bucket: bucket)
                source.tags[bucket] = 0
            } else {
                let target = table.occupyBucket(forKeyIn: source, bucket: bucket)
                (table.entries + target).initialize(to: source.entries[bucket])
                table.count += 1
            }
        }
        if moving { source.count = 0 }
        return table
    }

    /// Marks the bucket where the key in `source`'s `bucket` goes in this table (which holds no entry with that key)
    /// as occupied, and returns it.
    @inline(__always)
    private func occupyBucket(forKeyIn source: ObjectIDTableStorage, bucket: Int) -> Int {
        let home = hash(source.entries[bucket].key).home
        var target = home
        while tags[target] != 0 { target = (target + 1) & mask }
        occupy(target, home: home, tag: source.tags[bucket])
        return target
    }

    /// Moves the entry in `source`'s `bucket` into this table; the caller clears `source`'s tag for it.
    @inline(__always)
    fileprivate func insertMoving(from source: ObjectIDTableStorage, bucket: Int) {
        let target = occupyBucket(forKeyIn: source, bucket: bucket)
        (entries + target).moveInitialize(from: source.entries + bucket, count: 1)
        count += 1
    }

    /// The key's hash: its home bucket from the low bits, its tag from the high ones.
    @inline(__always)
    fileprivate func hash(_ key: NSManagedObjectID) -> (home: Int, tag: UInt8) {
        place(ofHash: ObjectIDDictionary<Value>.hash(of: key))
    }

    /// The home bucket and tag of a key with this hash.
    @inline(__always)
    fileprivate func place(ofHash hash: Int) -> (home: Int, tag: UInt8) {
        (hash & mask, UInt8(truncatingIfNeeded: UInt(bitPattern: hash) >> 57) | 0x80)
    }

    /// Marks `bucket` as holding an entry whose home is `home`.
    @inline(__always)
    private func occupy(_ bucket: Int, home: Int, tag: UInt8) {
        tags[bucket] = tag
        distances[bucket] = UInt8(Swift.min((bucket - home) & mask, 255))
    }

    /// How far the entry in `bucket` lies from its home bucket.
    @inline(__always)
    private func distance(_ bucket: Int) -> Int {
        let stored = distances[bucket]
        if stored < 255 { return Int(stored) }
        return (bucket - hash(entries[bucket].key).home) & mask
    }

    /// The bucket holding `key`, or the empty bucket where it would go, and the key's home and tag.
    @inline(__always)
    func find(_ key: NSManagedObjectID) -> (found: Int?, empty: Int, home: Int, tag: UInt8) {
        let (home, tag) = hash(key)
        var bucket = home
        while true {
            let current = tags[bucket]
            if current == 0 { return (nil, bucket, home, tag) }
            if current == tag, entries[bucket].key._isEqual(to: key) { return (bucket, bucket, home, tag) }
            bucket = (bucket + 1) & mask
        }
    }

    /// The value of `key`, if it is in the table.
    @inline(__always)
    func value(for key: NSManagedObjectID) -> Value? {
        guard let bucket = find(key).found else { return nil }
        return entries[bucket].value
    }

    /// Sets the value of `key` (the caller has made sure there is room).
    /// The key and value are taken over (`consuming`), so that storing them moves rather than copies them: a copy
    /// and the release of what it was copied from are two atomic operations per entry.
    func insert(_ key: consuming NSManagedObjectID, _ value: consuming Value) {
        let (found, empty, home, tag) = find(key)
        if let found {
            entries[found].value = value
            return
        }
        occupy(empty, home: home, tag: tag)
        (entries + empty).initialize(to: (key, value))
        count += 1
    }

    /// Removes `key`, moving later entries of its run back so that every entry stays reachable from its home bucket
    /// (each entry's distance from home says whether it may move, without looking at its key).
    func remove(_ key: NSManagedObjectID) {
        guard let bucket = find(key).found else { return }
        remove(at: bucket)
    }

    /// Removes the entry in `bucket`, which must hold one (see `remove(_:)`).
    func remove(at bucket: Int) {
        var hole = bucket
        tags[hole] = 0
        (entries + hole).deinitialize(count: 1)
        count -= 1
        var bucket = (hole + 1) & mask
        while tags[bucket] != 0 {
            let distance = distance(bucket)
            let gap = (bucket - hole) & mask
            // An entry may move back into the hole if its home is at or before the hole.
            if distance >= gap {
                tags[hole] = tags[bucket]
                distances[hole] = UInt8(Swift.min(distance - gap, 255))
                (entries + hole).moveInitialize(from: entries + bucket, count: 1)
                tags[bucket] = 0
                hole = bucket
            }
            bucket = (bucket + 1) & mask
        }
    }
}

/// An object to be taken out of a registry (`ObjectIDDictionary.removeObjects(_:)`): its ID's hash and its address,
/// which tells its entry from another object's under the same ID.
package struct RegisteredObjectEntry {
    let hash: Int
    let address: UnsafeMutableRawPointer

    @inline(__always)
    init(_ object: NSManagedObject) {
        hash = ObjectIDDictionary<Unmanaged<NSManagedObject>>.hash(of: object._objectID)
        address = Unmanaged.passUnretained(object).toOpaque()
    }
}

extension ObjectIDDictionary where Value == Unmanaged<NSManagedObject> {
    /// Removes the entry of each of `objects`, if it is still that object's (the objects' IDs are alive).
    ///
    /// A few are removed one by one. Many — a save's deleted objects, all leaving the context — are found in the
    /// order of the table's buckets, so that finding them walks the table once rather than probing it at random (a
    /// cache miss or more each in a table larger than the processor's caches), and the entries left are then moved
    /// to a new table in one pass: removing them one by one would move the later entries of a run back once for every
    /// entry removed before them.
    package mutating func removeObjects(_ objects: [RegisteredObjectEntry]) {
        // (No binding of `storage` here: it would defeat the uniqueness check.)
        guard !objects.isEmpty, !isEmpty else { return }
        makeUnique(adding: 0)
        if objects.count < 64 || objects.count * 8 < count {
            let table = storage.unsafelyUnwrapped
            for object in objects {
                if let bucket = table.bucket(of: object) { table.remove(at: bucket) }
            }
            return
        }
        storage = storage.unsafelyUnwrapped.removingObjects(objects)
    }
}

extension ObjectIDTableStorage where Value == Unmanaged<NSManagedObject> {
    /// The bucket of `object`'s entry, if it is in the table.
    @inline(__always)
    fileprivate func bucket(of object: RegisteredObjectEntry) -> Int? {
        let (home, tag) = place(ofHash: object.hash)
        var bucket = home
        while true {
            let current = tags[bucket]
            if current == 0 { return nil }
            if current == tag, entries[bucket].value.toOpaque() == object.address { return bucket }
            bucket = (bucket + 1) & mask
        }
    }

    /// A table of the entries not of `objects`; this table, which nothing else may be using, is left empty. See
    /// `ObjectIDDictionary.removeObjects(_:)`.
    fileprivate func removingObjects(_ objects: [RegisteredObjectEntry]) -> ObjectIDTableStorage {
        // The objects in the order of their home buckets, by a counting sort on groups of 64 buckets (a kilobyte of
        // entries: within a group the order does not matter to the caches).
        let groupShift = 6
        let groups = Swift.max(1, bucketCount >> groupShift)
        var starts = [Int](repeating: 0, count: groups + 1)
        for object in objects { starts[(place(ofHash: object.hash).home >> groupShift) + 1] += 1 }
        for group in 0..<groups { starts[group + 1] += starts[group] }
        var order = [Int32](repeating: 0, count: objects.count)
        for index in objects.indices {
            let group = place(ofHash: objects[index].hash).home >> groupShift
            order[starts[group]] = Int32(truncatingIfNeeded: index)
            starts[group] += 1
        }
        // Each entry removed is emptied and marked with a tag no key has (so that its run stays whole for the
        // lookups that follow), then the entries left move to a new table. Only the key needs destroying: the value
        // is an unretained reference.
        let removedTag: UInt8 = 0x01
        for index in order {
            guard let bucket = bucket(of: objects[Int(index)]) else { continue }
            UnsafeMutableRawPointer(entries + bucket).assumingMemoryBound(to: NSManagedObjectID.self)
                .deinitialize(count: 1)
            tags[bucket] = removedTag
            count -= 1
        }
        let table = ObjectIDTableStorage(minimumCapacity: count)
        for bucket in 0..<bucketCount where tags[bucket] != 0 {
            if tags[bucket] != removedTag { table.insertMoving(from: self, bucket: bucket) }
            tags[bucket] = 0
        }
        count = 0
        return table
    }
}
