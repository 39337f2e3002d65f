/// Whether a managed object class overrides `validate(value:forKey:)`, the per-key validation hook.
///
/// Apple's Core Data calls a `validate<Key>:error:` method only where a class has one (it asks the Objective-C
/// runtime, once per class and key). Swift on Linux has no such question to ask, and without an answer a save has to
/// hand every property of every object to the hook — making an `NSNumber` for each number — even though most classes
/// never override it. The answer is in the class's metadata: a Swift class dispatches `open` methods through a table
/// of implementations in its metadata, and a subclass that does not override a method holds the same implementation
/// there as `NSManagedObject` does.
///
/// Where in the table the hook sits is not written down anywhere, so it is measured once with two private subclasses,
/// one overriding the hook and one not: the hook's entry is the one the plain subclass inherits unchanged and the
/// overriding one replaces. (Entries of each class's own, like its descriptor, differ in both and so never qualify.)
/// If the measurement does not find exactly one such entry, or the platform lays out metadata differently
/// (Objective-C interop, 32-bit), every class counts as overriding: the hook is then always called, which is slower
/// but never wrong.
enum ValidationHookOverrides {
    /// Whether objects of `objectClass` must have their values handed to `validate(value:forKey:)`.
    @inline(__always)
    static func overridesHook(_ objectClass: NSManagedObject.Type) -> Bool {
        guard let entry = tableEntry else { return true }
        return word(entry, of: objectClass) != word(entry, of: NSManagedObject.self)
    }

    /// The index (in words from the metadata's address point) of the hook's entry in the method table, or `nil`.
    static let tableEntry: Int? = {
        #if canImport(ObjectiveC) || !(arch(x86_64) || arch(arm64))
        return nil
        #else
        let base = words(of: NSManagedObject.self)
        let plain = words(of: ValidationHookProbePlain.self)
        let overriding = words(of: ValidationHookProbeOverriding.self)
        // The probes add no stored properties and no methods, so their metadata is as long as the base class's.
        guard !base.isEmpty, plain.count == base.count, overriding.count == base.count else { return nil }
        // Past the fixed header (kind, superclass, flags and sizes, descriptor, ivar destroyer): the members.
        let found = (fixedHeaderWords..<base.count).filter { plain[$0] == base[$0] && overriding[$0] != base[$0] }
        return found.count == 1 ? found[0] : nil
        #endif
    }()

    /// The words of a Swift class's metadata (64-bit, no Objective-C interop) from its address point: the fixed
    /// header, then the members — generic arguments, field offsets and method tables, the superclass's first.
    private static func words(of objectClass: NSManagedObject.Type) -> [UInt] {
        let metadata = unsafeBitCast(objectClass, to: UnsafeRawPointer.self)
        // `ClassSize` and `ClassAddressPoint` (bytes), after kind, superclass, flags, instance address point,
        // instance size, alignment mask and a reserved field.
        let size = Int(metadata.load(fromByteOffset: 32, as: UInt32.self))
        let addressPoint = Int(metadata.load(fromByteOffset: 36, as: UInt32.self))
        let count = (size - addressPoint) / MemoryLayout<UInt>.size
        guard size > addressPoint, count > fixedHeaderWords, count < 1 << 16 else { return [] }
        return (0..<count).map { metadata.load(fromByteOffset: $0 * MemoryLayout<UInt>.size, as: UInt.self) }
    }

    private static let fixedHeaderWords = 7

    @inline(__always)
    private static func word(_ index: Int, of objectClass: NSManagedObject.Type) -> UInt {
        unsafeBitCast(objectClass, to: UnsafeRawPointer.self).load(
            fromByteOffset: index * MemoryLayout<UInt>.size, as: UInt.self)
    }
}

// Probes for `ValidationHookOverrides.tableEntry`; never instantiated.
private final class ValidationHookProbePlain: NSManagedObject {}
private final class ValidationHookProbeOverriding: NSManagedObject {
    override func validate(value: inout Any?, forKey key: String) throws {
        try super.validate(value: &value, forKey: key)
    }
}
