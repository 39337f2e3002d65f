/// One object's values, one per slot of its entity's layout: what a managed object, the row cache and a store row
/// hold. A collection with value semantics (copied on write, so that an object, its committed values and the row
/// cache share one buffer until one of them changes).
///
/// Not a `StoredValues`: the standard library allocates an array's buffer through code that is not
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
        storage.withUnsafeMutablePointerToElements { pointer in
            var next = pointer
            for element in elements {
                next.initialize(to: element)
                next += 1
            }
        }
        self.storage = storage
    }

    package init(repeating value: StoredValue, count: Int) {
        self.init(count: count, filledWith: value) { _ in }
    }

    /// `count` values, all `value` at first, then set by `body` (which must leave every one initialized).
    package init(
        count: Int, filledWith value: StoredValue = .null,
        _ body: (UnsafeMutableBufferPointer<StoredValue>) throws -> Void
    ) rethrows {
        guard count > 0 else {
            storage = nil
            return
        }
        let storage = StoredValueStorage.make(count: count)
        try storage.withUnsafeMutablePointerToElements { pointer in
            for index in 0..<count { (pointer + index).initialize(to: value) }
            try body(UnsafeMutableBufferPointer(start: pointer, count: count))
        }
        self.storage = storage
    }

    package var startIndex: Int { 0 }
    package var endIndex: Int { storage?.count ?? 0 }
    package var count: Int { storage?.count ?? 0 }
    package var isEmpty: Bool { storage == nil }

    @inline(__always)
    package func index(after index: Int) -> Int { index + 1 }

    @inline(__always)
    package func index(before index: Int) -> Int { index - 1 }

    package subscript(position: Int) -> StoredValue {
        @inline(__always)
        get {
            guard let storage, position >= 0, position < storage.count else { Self.outOfBounds(position) }
            return storage.withUnsafeMutablePointerToElements { $0[position] }
        }
        _modify {
            // No binding of `storage` here: a second reference would make the uniqueness check fail every time.
            guard position >= 0, position < count else { Self.outOfBounds(position) }
            if !isKnownUniquelyReferenced(&storage) { storage = storage.unsafelyUnwrapped.copy() }
            let pointer = storage.unsafelyUnwrapped.withUnsafeMutablePointerToElements { $0 + position }
            yield &pointer.pointee
        }
    }

    private static func outOfBounds(_ position: Int) -> Never {
        preconditionFailure("Index \(position) is out of range of an object's values")
    }
}

/// The buffer of `StoredValues`: the count, then the values. Both are reached through pointers, not through
/// `ManagedBuffer.header` (a class property, so each read is checked for exclusivity at run time), and copied and
/// destroyed one value at a time by code specialized for `StoredValue` (the bulk operations go through the
/// runtime's generic value witnesses).
package final class StoredValueStorage: ManagedBuffer<Int, StoredValue> {
    static func make(count: Int) -> StoredValueStorage {
        unsafeDowncast(create(minimumCapacity: count) { _ in count }, to: StoredValueStorage.self)
    }

    var count: Int {
        @inline(__always) get { withUnsafeMutablePointerToHeader { $0.pointee } }
    }

    func copy() -> StoredValueStorage {
        let count = self.count
        let copy = StoredValueStorage.make(count: count)
        withUnsafeMutablePointerToElements { source in
            copy.withUnsafeMutablePointerToElements { target in
                for index in 0..<count { (target + index).initialize(to: source[index]) }
            }
        }
        return copy
    }

    deinit {
        withUnsafeMutablePointers { count, elements in
            for index in 0..<count.pointee { (elements + index).deinitialize(count: 1) }
        }
    }
}
