/// A dictionary keyed by object IDs, for the tables that hold one entry per object: a context's registry, a store's
/// row cache, the versions of a save. Same semantics, subscripts and iteration as a dictionary (and value semantics:
/// a copy is made when a shared table is changed).
///
/// Not a `[NSManagedObjectID: Value]`:
/// - that compares keys through `NSObject`'s `==`, which boxes the other ID in `Any` and casts it back in
///   `isEqual(_:)`, and hashes them with SipHash; this table compares IDs with `_isEqual(to:)` and mixes their
///   precomputed hash with `cheapHash`;
/// - a `Dictionary` fills at most 3/4 of its buckets and doubles, so 100,000 entries take 262,144 buckets; this
///   table fills up to 4/5 (buckets probed in groups of eight), so the same entries take half the memory. A byte per
///   bucket holds seven bits of the key's hash, so a probe compares a group's eight bytes at once and looks at a key
///   only where they match, and nothing moves when an entry is removed (see `ObjectIDTableStorage`);
/// - a `Dictionary` scatters its keys, so the objects of consecutive rows, made one after another and mostly used
///   and released together, touch a different part of a table larger than the processor's caches each (a cache
///   miss each); this table puts the IDs of eight consecutive rows of an entity in one group of buckets, side by
///   side (see `hash(of:)`).
package typealias ObjectIDDictionary<Value> = ObjectIDTable<ObjectIDTableKeyedEntry<Value>>

/// What an `ObjectIDTable` keeps in a bucket: a value and the ID it is found by, which the entry holds or — for the
/// registry's objects, `ObjectIDTableObjectEntry` — reads from the value.
package protocol ObjectIDTableEntry {
    associatedtype Value
    /// The entry of `value` under `key` (for an entry that reads its key from its value, the value's own).
    init(key: consuming NSManagedObjectID, value: consuming Value)
    var key: NSManagedObjectID { get }
    var value: Value { get set }
    /// Whether the key of the entry at `entry` is `key`. (Of an entry in place, not a copy, whose references would be
    /// retained and released around the question.)
    static func entry(at entry: UnsafePointer<Self>, hasKey key: NSManagedObjectID) -> Bool
    /// The `ObjectIDTable.hash(of:)` of the key of the entry at `entry`.
    static func keyHash(ofEntryAt entry: UnsafePointer<Self>) -> Int
}

/// An entry that holds its key beside its value: a key and its value side by side, so that a lookup, which compares
/// the key and then reads the value, misses the cache once instead of twice in a table too large for it.
package struct ObjectIDTableKeyedEntry<Value>: ObjectIDTableEntry {
    package let key: NSManagedObjectID
    package var value: Value

    @inline(__always)
    package init(key: consuming NSManagedObjectID, value: consuming Value) {
        self.key = key
        self.value = value
    }

    @inline(__always)
    package static func entry(at entry: UnsafePointer<Self>, hasKey key: NSManagedObjectID) -> Bool {
        entry.pointee.key._isEqual(to: key)
    }

    @inline(__always)
    package static func keyHash(ofEntryAt entry: UnsafePointer<Self>) -> Int {
        ObjectIDDictionary<Value>.hash(of: entry.pointee.key)
    }
}

/// A dictionary keyed by object IDs (see `ObjectIDDictionary`), generic over what a bucket holds.
package struct ObjectIDTable<Entry: ObjectIDTableEntry>: ExpressibleByDictionaryLiteral, Sequence {
    package typealias Key = NSManagedObjectID
    package typealias Value = Entry.Value

    private var storage: ObjectIDTableStorage<Entry>?

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
        // The table borrowed (see `removeObject(_:)`).
        Unmanaged.passUnretained(storage.unsafelyUnwrapped)._withUnsafeGuaranteedRef { table in
            let found = table.find(objectID)
            guard let bucket = found.found, shouldRemove(&table.entries[bucket].value) else { return }
            table.remove(at: bucket, home: found.home)
        }
    }

    /// A key's hash as the table uses it: the home bucket of the low bits, the tag of the high seven.
    ///
    /// The IDs of eight consecutive rows of an entity (primary keys 8n to 8n + 7), or eight consecutive temporary
    /// IDs, have one home group, each its own bucket in it (the key's three low bits; `_hashValue` mixes the entity
    /// into the others) and its own tag; which group is the mixed hash of the other bits.
    @inline(__always)
    package static func hash(of key: NSManagedObjectID) -> Int {
        let hash = key._hashValue
        let low = hash & 7
        return (cheapHash(hash &>> 3, seed: 0) &<< 3 | low) ^ (low &<< 58)
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

    package mutating func merge(_ other: ObjectIDTable<Entry>, uniquingKeysWith combine: (Value, Value) -> Value) {
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
        private let storage: ObjectIDTableStorage<Entry>?
        private var bucket = 0

        fileprivate init(storage: ObjectIDTableStorage<Entry>?) {
            self.storage = storage
        }

        package mutating func next() -> (key: NSManagedObjectID, value: Value)? {
            guard let storage else { return nil }
            while bucket < storage.bucketCount {
                defer { bucket += 1 }
                if storage.tags[bucket] != 0 {
                    return (storage.entries[bucket].key, storage.entries[bucket].value)
                }
            }
            return nil
        }
    }

    /// Makes the storage this value's own, with room for `adding` more entries.
    private mutating func makeUnique(adding: Int) {
        let needed = count + adding
        let unique = isKnownUniquelyReferenced(&storage)
        if unique, needed <= (storage?.capacity ?? 0) { return }
        let grown = storage.map { needed > $0.capacity ? $0.bucketCount * 2 * 4 / 5 : $0.capacity } ?? 6
        storage = ObjectIDTableStorage.copy(of: storage, minimumCapacity: Swift.max(needed, grown), moving: unique)
    }
}

/// The buckets of an `ObjectIDDictionary`, in groups of eight: a tag per bucket says whether it holds an entry (a
/// key and its value). The number of buckets is a power of two.
///
/// A key's hash names its home bucket, and so its home group. A key goes to its home bucket if that is free, else to
/// the first free bucket of its group, else of the groups after it in its probe sequence (one, two, three… groups
/// further each time, which visits every group). Each group counts the keys that were put past it, full, in their
/// probe sequences: a lookup reads a group's eight tags as one word, compares the key only where a tag matches, and
/// ends at a group that no key was put past. A removal empties its bucket and takes one from the count of every
/// group its key was put past, so nothing moves and no bucket is left marked.
final class ObjectIDTableStorage<Entry: ObjectIDTableEntry> {
    let bucketCount: Int
    fileprivate let mask: Int
    private let groupMask: Int
    /// How many entries fit before the table must grow: 4/5 of the buckets.
    let capacity: Int
    fileprivate(set) var count = 0
    /// Per bucket: 0 if empty, else 0x80 and seven bits of the key's hash.
    fileprivate let tags: UnsafeMutablePointer<UInt8>
    /// Per group: how many keys were put past it (see the type's description); at 255 it stays there, for good.
    private let passedOver: UnsafeMutablePointer<UInt8>
    /// Initialized exactly where the tag is not 0.
    let entries: UnsafeMutablePointer<Entry>

    init(minimumCapacity: Int) {
        var buckets = 8
        while buckets * 4 / 5 < minimumCapacity { buckets *= 2 }
        bucketCount = buckets
        mask = buckets - 1
        groupMask = buckets / 8 - 1
        capacity = buckets * 4 / 5
        // Allocated as words, so that every group's tags can be read as one aligned word.
        tags = UnsafeMutableRawPointer(UnsafeMutablePointer<UInt64>.allocate(capacity: buckets / 8))
            .initializeMemory(as: UInt8.self, repeating: 0, count: buckets)
        passedOver = .allocate(capacity: buckets / 8)
        passedOver.initialize(repeating: 0, count: buckets / 8)
        entries = .allocate(capacity: buckets)
    }

    deinit {
        // Only the occupied buckets hold anything to destroy (and a table whose entries moved out holds nothing). An
        // entry that owns nothing (the registry's unretained references) needs no destroying at all. (A struct, not
        // a tuple: this code is not specialized, and destroying a tuple looked its type up in the runtime's metadata
        // for every entry.)
        if !_isPOD(Entry.self) {
            var bucket = 0
            var remaining = count
            while remaining > 0, bucket < bucketCount {
                if tags[bucket] != 0 {
                    (entries + bucket).deinitialize(count: 1)
                    remaining -= 1
                }
                bucket += 1
            }
        }
        entries.deallocate()
        passedOver.deallocate()
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
        if moving {
            source.passedOver.update(repeating: 0, count: source.groupMask + 1)
            source.count = 0
        }
        return table
    }

    /// Marks the bucket where the key in `source`'s `bucket` goes in this table (which holds no entry with that key)
    /// as occupied, and returns it.
    @inline(__always)
    private func occupyBucket(forKeyIn source: ObjectIDTableStorage, bucket: Int) -> Int {
        let home = place(ofHash: Entry.keyHash(ofEntryAt: source.entries + bucket)).home
        let (target, passed) = emptyBucket(home: home)
        passOver(home: home, probes: passed)
        tags[target] = source.tags[bucket]
        return target
    }

    /// Moves the entry in `source`'s `bucket` into this table; the caller clears `source`'s tag for it.
    @inline(__always)
    private func insertMoving(from source: ObjectIDTableStorage, bucket: Int) {
        let target = occupyBucket(forKeyIn: source, bucket: bucket)
        (entries + target).moveInitialize(from: source.entries + bucket, count: 1)
        count += 1
    }

    /// The key's hash: its home bucket from the low bits, its tag from the high ones.
    @inline(__always)
    fileprivate func hash(_ key: NSManagedObjectID) -> (home: Int, tag: UInt8) {
        place(ofHash: ObjectIDTable<Entry>.hash(of: key))
    }

    /// The home bucket and tag of a key with this hash.
    @inline(__always)
    fileprivate func place(ofHash hash: Int) -> (home: Int, tag: UInt8) {
        (hash & mask, UInt8(truncatingIfNeeded: UInt(bitPattern: hash) >> 57) | 0x80)
    }

    /// The tags of the group that starts at `bucket` (a multiple of 8), byte `i` being bucket `bucket + i`'s.
    @inline(__always)
    private func group(at bucket: Int) -> UInt64 {
        UInt64(littleEndian: UnsafeRawPointer(tags + bucket).load(as: UInt64.self))
    }

    /// Counts a key put past the first `probes` groups of its probe sequence.
    @inline(__always)
    private func passOver(home: Int, probes: Int) {
        var sequence = ProbeSequence(home: home, mask: mask)
        while sequence.probes < probes {
            let group = sequence.start &>> 3
            if passedOver[group] < 255 { passedOver[group] += 1 }
            sequence.next()
        }
    }

    /// The bucket of the key whose home is `home` and tag `tag`, if the table holds it. `matches` is asked about
    /// each occupied bucket with that tag, in probing order, and says whether it holds the key.
    @inline(__always)
    fileprivate func lookUp(home: Int, tag: UInt8, matches: (Int) -> Bool) -> Int? {
        // The home bucket first: where a key most often is.
        if tags[home] == tag, matches(home) { return home }
        var sequence = ProbeSequence(home: home, mask: mask)
        while true {
            let start = sequence.start
            var candidates = GroupBits.zeroBytes(group(at: start) ^ (GroupBits.lowBits &* UInt64(tag)))
            while candidates != 0 {
                let bucket = start + GroupBits.firstByte(candidates)
                if bucket != home, matches(bucket) { return bucket }
                candidates &= candidates &- 1
            }
            // After as many probes as groups, every group has been looked at.
            if passedOver[start &>> 3] == 0 || sequence.probes == groupMask { return nil }
            sequence.next()
        }
    }

    /// The empty bucket where a key whose home is `home` goes (its home if that is empty, else the first empty bucket
    /// of its probe sequence), and how many groups of the sequence come before that bucket's. (There is one: at most
    /// 4/5 of the buckets are occupied, and the sequence visits every group.)
    @inline(__always)
    private func emptyBucket(home: Int) -> (bucket: Int, passed: Int) {
        if tags[home] == 0 { return (home, 0) }
        var sequence = ProbeSequence(home: home, mask: mask)
        while true {
            let empty = GroupBits.zeroBytes(group(at: sequence.start))
            if empty != 0 { return (sequence.start + GroupBits.firstByte(empty), sequence.probes) }
            sequence.next()
        }
    }

    /// The bucket holding `key`, if the table holds it, and the key's home and tag.
    @inline(__always)
    func find(_ key: NSManagedObjectID) -> (found: Int?, home: Int, tag: UInt8) {
        let (home, tag) = hash(key)
        return (lookUp(home: home, tag: tag) { Entry.entry(at: entries + $0, hasKey: key) }, home, tag)
    }

    /// The value of `key`, if it is in the table.
    @inline(__always)
    func value(for key: NSManagedObjectID) -> Entry.Value? {
        guard let bucket = find(key).found else { return nil }
        return entries[bucket].value
    }

    /// Sets the value of `key` (the caller has made sure there is room).
    /// The key and value are taken over (`consuming`), so that storing them moves rather than copies them: a copy
    /// and the release of what it was copied from are two atomic operations per entry.
    func insert(_ key: consuming NSManagedObjectID, _ value: consuming Entry.Value) {
        let (found, home, tag) = find(key)
        if let found {
            entries[found].value = value
            return
        }
        occupy(home: home, tag: tag, with: Entry(key: key, value: value))
    }

    /// Puts `entry`, whose key's home and tag these are and which the table does not hold, in the table (the caller
    /// has made sure there is room).
    @inline(__always)
    fileprivate func occupy(home: Int, tag: UInt8, with entry: consuming Entry) {
        let (free, passed) = emptyBucket(home: home)
        passOver(home: home, probes: passed)
        tags[free] = tag
        (entries + free).initialize(to: entry)
        count += 1
    }

    /// Removes the entry in `bucket`, whose key's home is `home`: the bucket is emptied, and the groups the key was
    /// put past count one key fewer.
    func remove(at bucket: Int, home: Int) {
        tags[bucket] = 0
        (entries + bucket).deinitialize(count: 1)
        count -= 1
        let target = bucket & ~7
        var sequence = ProbeSequence(home: home, mask: mask)
        // (The key's group is in its probe sequence, within as many probes as there are groups.)
        while sequence.start != target, sequence.probes <= groupMask {
            let group = sequence.start &>> 3
            if passedOver[group] < 255 { passedOver[group] -= 1 }
            sequence.next()
        }
    }
}

/// The groups a key's probe sequence visits, by their first buckets: its home group, then the 1st, 3rd, 6th… group
/// after it (each step one group longer than the last, which visits every group of a table of 2ⁿ groups).
private struct ProbeSequence {
    private(set) var start: Int
    /// How many groups the sequence has passed.
    private(set) var probes = 0
    private let mask: Int

    @inline(__always)
    init(home: Int, mask: Int) {
        start = home & ~7
        self.mask = mask
    }

    @inline(__always)
    mutating func next() {
        probes &+= 1
        start = (start &+ probes &<< 3) & mask
    }
}

/// Reading a group's eight tags as one word.
private enum GroupBits {
    static let lowBits: UInt64 = 0x0101_0101_0101_0101
    static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// The high bit of each byte of `word` that is zero, and no other bit (no carries from byte to byte).
    @inline(__always)
    static func zeroBytes(_ word: UInt64) -> UInt64 {
        let low = ~highBits
        return ~(((word & low) &+ low) | word | low)
    }

    /// The byte of the lowest set bit.
    @inline(__always)
    static func firstByte(_ bits: UInt64) -> Int {
        bits.trailingZeroBitCount &>> 3
    }
}

/// The registry's entry: an object, unretained, found by its own ID (`_objectID`), which the entry does not hold a
/// second time — half the memory of an ID beside each object, and no reference count to take and give back for the
/// ID as an object is registered and leaves. An object's ID changes only while it is out of the registry
/// (`_changeID(of:to:)`), and every object leaves its context's registry before it goes away.
package struct ObjectIDTableObjectEntry: ObjectIDTableEntry {
    package var value: Unmanaged<NSManagedObject>

    @inline(__always)
    package init(_ object: NSManagedObject) {
        value = Unmanaged.passUnretained(object)
    }

    @inline(__always)
    package init(key: consuming NSManagedObjectID, value: consuming Unmanaged<NSManagedObject>) {
        self.value = value
        assert(self.value._withUnsafeGuaranteedRef { $0._objectID._isEqual(to: key) }, "registered under another ID")
    }

    package var key: NSManagedObjectID { value._withUnsafeGuaranteedRef { $0._objectID } }

    @inline(__always)
    package static func entry(at entry: UnsafePointer<Self>, hasKey key: NSManagedObjectID) -> Bool {
        entry.pointee.value._withUnsafeGuaranteedRef { $0._objectID._isEqual(to: key) }
    }

    @inline(__always)
    package static func keyHash(ofEntryAt entry: UnsafePointer<Self>) -> Int {
        entry.pointee.value._withUnsafeGuaranteedRef { ObjectRegistry.hash(of: $0._objectID) }
    }
}

/// A context's registry: its objects by ID, unretained.
package typealias ObjectRegistry = ObjectIDTable<ObjectIDTableObjectEntry>

extension ObjectIDTable where Entry == ObjectIDTableObjectEntry {
    /// Registers `object` under its ID, in place of the object registered under it if there is one. The ID is read
    /// from the object, not handed over: nothing is retained.
    package mutating func register(_ object: NSManagedObject) {
        makeUnique(adding: 1)
        // The object holds its ID while it is registered.
        unowned(unsafe) let objectID = object._objectID
        let entry = ObjectIDTableObjectEntry(object)
        Unmanaged.passUnretained(storage.unsafelyUnwrapped)._withUnsafeGuaranteedRef { table in
            let (home, tag) = table.place(ofHash: Self.hash(of: objectID))
            let found = table.lookUp(home: home, tag: tag) { Entry.entry(at: table.entries + $0, hasKey: objectID) }
            if let found {
                table.entries[found] = entry
            } else {
                table.occupy(home: home, tag: tag, with: entry)
            }
        }
    }

    /// Removes `object`'s entry if the object registered under its ID is this one (another may be, when this one was
    /// replaced), and says whether it did. The entry is told by the object's address, so that no key is compared.
    package mutating func removeObject(_ object: NSManagedObject) -> Bool {
        guard !isEmpty else { return false }
        let hash = Self.hash(of: object._objectID)
        let address = Unmanaged.passUnretained(object).toOpaque()
        // (No binding of `storage` may outlive the uniqueness check: it would defeat it; see `removeValue`.)
        if !isKnownUniquelyReferenced(&storage) {
            guard storage?.bucket(ofHash: hash, address: address) != nil else { return false }
            makeUnique(adding: 0)
        }
        // The table borrowed, not retained and released around the removal: this value holds it, and nothing in the
        // removal changes `storage`.
        return Unmanaged.passUnretained(storage.unsafelyUnwrapped)._withUnsafeGuaranteedRef { table in
            guard let (bucket, home) = table.bucket(ofHash: hash, address: address) else { return false }
            table.remove(at: bucket, home: home)
            return true
        }
    }
}

extension ObjectIDTableStorage where Entry == ObjectIDTableObjectEntry {
    /// The bucket of the entry whose key has this hash and whose value is the object at `address`, if there is one,
    /// and the key's home.
    @inline(__always)
    fileprivate func bucket(ofHash hash: Int, address: UnsafeMutableRawPointer) -> (bucket: Int, home: Int)? {
        let (home, tag) = place(ofHash: hash)
        guard let bucket = lookUp(home: home, tag: tag, matches: { entries[$0].value.toOpaque() == address }) else {
            return nil
        }
        return (bucket, home)
    }
}
