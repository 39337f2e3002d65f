/// Why a managed object's values changed underneath it, for `awakeFromSnapshotEvents(_:)`.
public struct NSSnapshotEventType: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// An insertion was undone.
    public static let undoInsertion = NSSnapshotEventType(rawValue: 1 << 1)
    /// A deletion was undone.
    public static let undoDeletion = NSSnapshotEventType(rawValue: 1 << 2)
    /// An update was undone.
    public static let undoUpdate = NSSnapshotEventType(rawValue: 1 << 3)
    /// The context rolled back.
    public static let rollback = NSSnapshotEventType(rawValue: 1 << 4)
    /// The object was refreshed.
    public static let refresh = NSSnapshotEventType(rawValue: 1 << 5)
    /// A merge policy changed the object's values.
    public static let mergePolicy = NSSnapshotEventType(rawValue: 1 << 6)
}

#if !canImport(ObjectiveC)
/// Apple's `validateValue(_:forKey:)` takes an `AutoreleasingUnsafeMutablePointer`, which exists only with the
/// Objective-C runtime. Elsewhere it is an ordinary mutable pointer, so the same call (`try
/// object.validateValue(&value, forKey: "name")`) builds unchanged.
public typealias AutoreleasingUnsafeMutablePointer<Pointee> = UnsafeMutablePointer<Pointee>
#endif
