/// Reading the reference out of an `Any?` without a dynamic cast, for the `isEqual(_:)` overrides that sets and
/// dictionaries call through `NSObject`'s `==`, which boxes the other element in an `Any` (casting it back cost about
/// 400 instructions and a retain and release per comparison).
enum PlainReference {
    /// The reference `value` holds if its box is typed as one of the given classes — an `Any?` is three words of inline
    /// value and then the type's metadata (null for `nil`), and a box typed as a class holds just the reference in its
    /// first word — or `nil` for any other box (a Swift value, an optional, a protocol type), which the caller leaves to
    /// the cast. Swift's existential layout is stable; this was checked for a class typed as itself, its superclass,
    /// `NSObject`, an optional and `nil`.
    @inline(__always)
    static func `in`(_ value: Any?, typedAs first: AnyClass, _ second: AnyClass, _ third: AnyClass)
        -> UnsafeRawPointer?
    {
        withUnsafeBytes(of: value) { bytes -> UnsafeRawPointer? in
            guard bytes.count == 4 * MemoryLayout<UInt>.stride else { return nil }
            let type = bytes.load(fromByteOffset: 3 * MemoryLayout<UInt>.stride, as: UInt.self)
            guard type != 0,
                type == unsafeBitCast(first, to: UInt.self) || type == unsafeBitCast(second, to: UInt.self)
                    || type == unsafeBitCast(third, to: UInt.self)
            else { return nil }
            return bytes.load(as: UnsafeRawPointer?.self)
        }
    }
}
