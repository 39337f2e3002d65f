/// One object's values, one per slot of its entity's layout: what a managed object, the row cache and a store row
/// hold. A collection with value semantics (copied on write, so that an object, its committed values and the row
/// cache share one buffer until one of them changes).
///
/// Not a `ContiguousArray<StoredValue>`: the standard library allocates an array's buffer through code that is not
/// specialized for element types of other modules, and so looks the buffer class up in the runtime's generic
/// metadata on every allocation — about 400 instructions, for every row read. This buffer's class is not generic,
/// and its header is 16 bytes smaller.
package struct StoredValues: RandomAccessCollection, MutableCollection, ExpressibleByArrayLiteral {
    package typealias Index = Int
    package typealias Element = StoredValue

    /// The values; `nil` when there are none.
    private var storage: StoredValueStorage?

    package init() {
        storage = nil
    }

    package init(arrayLiteral elements: StoredValue...) {
        self.init(elements)
    }

    package init(_ elements: some Collection<StoredValue>) {
        let count = elements.count
        guard count > 0 else {
            storage = nil
            return
        }
        let storage = StoredValueStorage.make(count: count)
        var index = 0
        for element in elements {
            StoredValueStorage.store(element, at: storage.address(index))
            index += 1
        }
        self.storage = storage
    }

    package init(repeating value: StoredValue, count: Int) {
        self.init(count: count, filledWith: value) { _ in }
    }

    /// `count` values, all `value` at first, then set by `body`.
    package init(
        count: Int, filledWith value: StoredValue = .null, _ body: (StoredValueSlots) throws -> Void
    ) rethrows {
        guard count > 0 else {
            storage = nil
            return
        }
        let storage = StoredValueStorage.make(count: count)
        if value.isNull {
            // `.null` owns nothing, so its bytes are simply repeated.
            StoredValueStorage.store(.null, at: storage.address(0))
            for index in 1..<count {
                storage.address(index).copyMemory(from: storage.address(0), byteCount: StoredValueStorage.width)
            }
        } else {
            for index in 0..<count { StoredValueStorage.store(value, at: storage.address(index)) }
        }
        try body(StoredValueSlots(storage: storage))
        self.storage = storage
    }

    package var startIndex: Int { 0 }
    package var endIndex: Int { storage?.count ?? 0 }
    package var count: Int { storage?.count ?? 0 }
    package var isEmpty: Bool { storage == nil }

    /// Whether no other `StoredValues` shares these values (none are held anywhere else). Empty values are shared by
    /// no one.
    package mutating func isUnshared() -> Bool {
        storage == nil || isKnownUniquelyReferenced(&storage)
    }

    /// Whether `other` holds these very values (not equal ones: the same storage). Empty values share nothing.
    func _sharesStorage(with other: StoredValues) -> Bool {
        storage != nil && storage === other.storage
    }

    @inline(__always)
    package func index(after index: Int) -> Int { index + 1 }

    @inline(__always)
    package func index(before index: Int) -> Int { index - 1 }

    /// Whether the value at `position` is `.null`, looked at where it is (no copy, no retain of what it holds).
    @inline(__always)
    package func isNull(at position: Int) -> Bool {
        guard let storage, position >= 0, position < storage.count else { Self.outOfBounds(position) }
        var lent = StoredValueStorage.lend(from: storage.address(position))
        defer { StoredValueStorage.forget(&lent) }
        if case .null = lent { return true }
        return false
    }

    package subscript(position: Int) -> StoredValue {
        @inline(__always)
        _read {
            guard let storage, position >= 0, position < storage.count else { Self.outOfBounds(position) }
            // Lent, not copied: a caller that only looks at the value (most do) retains nothing.
            var lent = StoredValueStorage.lend(from: storage.address(position))
            defer { StoredValueStorage.forget(&lent) }
            yield lent
        }
        @inline(__always)
        set {
            // No binding of `storage` here: a second reference would make the uniqueness check fail every time.
            guard position >= 0, position < count else { Self.outOfBounds(position) }
            if !isKnownUniquelyReferenced(&storage) { storage = storage.unsafelyUnwrapped.copy() }
            let address = storage.unsafelyUnwrapped.address(position)
            StoredValueStorage.clear(address)
            StoredValueStorage.store(newValue, at: address)
        }
        _modify {
            guard position >= 0, position < count else { Self.outOfBounds(position) }
            if !isKnownUniquelyReferenced(&storage) { storage = storage.unsafelyUnwrapped.copy() }
            let address = storage.unsafelyUnwrapped.address(position)
            // The value is moved out for the caller to change, and moved back even if the caller throws.
            var value = StoredValueStorage.take(from: address)
            defer { StoredValueStorage.move(&value, to: address) }
            yield &value
        }
    }

    private static func outOfBounds(_ position: Int) -> Never {
        preconditionFailure("Index \(position) is out of range of an object's values")
    }
}

/// Write access to the values of a `StoredValues` being made (see `init(count:filledWith:_:)`).
package struct StoredValueSlots {
    /// Unretained: the slots exist only during the call that fills a new storage, which its maker holds.
    fileprivate unowned(unsafe) let storage: StoredValueStorage

    package var count: Int { storage.count }

    package subscript(position: Int) -> StoredValue {
        get {
            precondition(position >= 0 && position < storage.count, "Index \(position) is out of range")
            return StoredValueStorage.copy(from: storage.address(position))
        }
        nonmutating set {
            precondition(position >= 0 && position < storage.count, "Index \(position) is out of range")
            let address = storage.address(position)
            StoredValueStorage.clear(address)
            StoredValueStorage.store(newValue, at: address)
        }
    }
}

/// The buffer of `StoredValues`: the count, then the values, packed at their size rather than their stride.
///
/// A `StoredValue` is 17 bytes (16 of payload and a tag byte) and its stride 24, so an array of them is nearly a
/// third padding — for ten attributes, a 272-byte allocation where 208 will do, on every object and row held. The
/// values are therefore stored unaligned, end to end, and only ever reached by copying their bytes to and from
/// aligned temporaries (`copy(from:)`, `lend(from:)`, `take(from:)`, `store(_:at:)`, `move(_:to:)`). This is
/// sound because every payload (integers, floats, strings, `Data`, `UUID`, `URL`, `Date` and strong class
/// references) may be moved by copying its bytes: none is a weak reference or holds its own address.
///
/// The count is reached through a pointer, not through `ManagedBuffer.header` (a class property, so each read is
/// checked for exclusivity at run time).
package final class StoredValueStorage: ManagedBuffer<Int, UInt8> {
    /// Bytes per value.
    @inline(__always) static var width: Int { MemoryLayout<StoredValue>.size }

    /// A buffer for `count` values, none of them there yet: the caller must `store(_:at:)` one at every index before
    /// the buffer can go (its `deinit` destroys `count` values).
    static func make(count: Int) -> StoredValueStorage {
        unsafeDowncast(create(minimumCapacity: count * width) { _ in count }, to: StoredValueStorage.self)
    }

    var count: Int {
        @inline(__always) get { withUnsafeMutablePointerToHeader { $0.pointee } }
    }

    /// Where value `index` starts (not aligned for `StoredValue`).
    @inline(__always) func address(_ index: Int) -> UnsafeMutableRawPointer {
        withUnsafeMutablePointerToElements { UnsafeMutableRawPointer($0) + index &* Self.width }
    }

    /// A copy of the value at `source`, which stays as it was.
    @inline(__always) static func copy(from source: UnsafeRawPointer) -> StoredValue {
        withUnsafeTemporaryAllocation(of: StoredValue.self, capacity: 1) { temporary in
            let aligned = temporary.baseAddress.unsafelyUnwrapped
            UnsafeMutableRawPointer(aligned).copyMemory(from: source, byteCount: width)
            // The temporary's bytes are the stored value's, borrowed: copied out here and never destroyed.
            return aligned.pointee
        }
    }

    /// The value at `source` as a bitwise alias, which must be given to `forget(_:)` before the stored value can
    /// change and before it goes out of scope: it does not own the references it holds.
    @inline(__always) static func lend(from source: UnsafeRawPointer) -> StoredValue {
        var alias = StoredValue.null
        withUnsafeMutableBytes(of: &alias) {
            $0.baseAddress.unsafelyUnwrapped.copyMemory(from: source, byteCount: width)
        }
        return alias
    }

    /// Ends a loan from `lend(from:)`: the alias is overwritten, not destroyed.
    @inline(__always) static func forget(_ alias: inout StoredValue) {
        withUnsafeMutablePointer(to: &alias) { $0.initialize(to: .null) }
    }

    /// The value at `source`, moved out: the bytes there no longer hold a value.
    @inline(__always) static func take(from source: UnsafeRawPointer) -> StoredValue {
        withUnsafeTemporaryAllocation(of: StoredValue.self, capacity: 1) { temporary in
            let aligned = temporary.baseAddress.unsafelyUnwrapped
            UnsafeMutableRawPointer(aligned).copyMemory(from: source, byteCount: width)
            return aligned.move()
        }
    }

    /// Moves `value` to `target` (which must hold no value), leaving `.null` in its place.
    @inline(__always) static func move(_ value: inout StoredValue, to target: UnsafeMutableRawPointer) {
        withUnsafeMutablePointer(to: &value) { pointer in
            target.copyMemory(from: pointer, byteCount: width)
            // The bytes now belong to `target`; overwritten without being destroyed.
            pointer.initialize(to: .null)
        }
    }

    /// Destroys the value at `target`, for `move(_:to:)` to put another there. Destroying `.null`, the common case of
    /// a value set the first time, is skipped (it holds nothing).
    @inline(__always) static func clear(_ target: UnsafeMutableRawPointer) {
        let holdsNothing = withUnsafeTemporaryAllocation(of: StoredValue.self, capacity: 1) { temporary in
            let aligned = temporary.baseAddress.unsafelyUnwrapped
            UnsafeMutableRawPointer(aligned).copyMemory(from: target, byteCount: width)
            return aligned.pointee.isNull
        }
        if !holdsNothing { _ = take(from: target) }
    }

    /// Moves `value` to `target` (which must hold no value).
    @inline(__always) static func store(_ value: consuming StoredValue, at target: UnsafeMutableRawPointer) {
        withUnsafeTemporaryAllocation(of: StoredValue.self, capacity: 1) { temporary in
            let aligned = temporary.baseAddress.unsafelyUnwrapped
            aligned.initialize(to: consume value)
            value = .null
            target.copyMemory(from: aligned, byteCount: width)
        }
    }

    func copy() -> StoredValueStorage {
        let count = self.count
        let copy = StoredValueStorage.make(count: count)
        for index in 0..<count { Self.store(Self.copy(from: address(index)), at: copy.address(index)) }
        return copy
    }

    deinit {
        for index in 0..<count { _ = Self.take(from: address(index)) }
    }
}
