import Synchronization

/// The identity of a managed object: which store it lives in, its entity and its key in that store.
///
/// An object inserted into a context has a temporary ID until it is saved (or `obtainPermanentIDs(for:)` is
/// called); then it has a permanent one, whose URI (`x-coredata://<store UUID>/<Entity>/p<n>`) names it across
/// launches. IDs are immutable and may be passed between threads and contexts; objects may not.
///
/// ```swift
/// let id = employee.objectID
/// let again = try otherContext.existingObject(with: id)
/// ```
public final class NSManagedObjectID: NSObject, NSCopying, @unchecked Sendable {
    // @unchecked: every stored property is a constant; the store it names is held weakly by `ObjectIDStoreReference`.
    /// What identifies the object within its store.
    enum Reference: Hashable, @unchecked Sendable {
        // @unchecked: only `AnyHashable` is not `Sendable`: an atomic or incremental store's reference object, which it must not
        // change once it has handed it out (Apple's contract for reference objects).
        /// An object not yet saved: unique in this process.
        case temporary(UInt64)
        /// A row of a SQL store, or a numbered object of an atomic store.
        case primaryKey(Int64)
        /// The reference object an atomic or custom incremental store chose.
        indirect case object(AnyHashable)
    }

    let _entity: NSEntityDescription
    /// The store and its identifier (kept so that the URI stays right after the store object has gone), shared by
    /// the store's IDs: making an ID then neither forms a weak reference nor copies the identifier.
    let _storeReference: ObjectIDStoreReference?
    let _reference: Reference
    /// `hash`, computed once: IDs are looked up in the registries and caches far more often than they are made.
    let _hashValue: Int

    convenience init(entity: NSEntityDescription, store: NSPersistentStore?, reference: Reference) {
        self.init(entity: entity, storeReference: store?._objectIDReference, reference: reference)
    }

    /// An ID of the store `storeReference` stands for (a store making many IDs looks its reference up once).
    init(entity: NSEntityDescription, storeReference: ObjectIDStoreReference?, reference: Reference) {
        _entity = entity
        _storeReference = storeReference
        _reference = reference
        // Hashed again by whatever table holds the ID, so the key itself will do.
        switch reference {
        case .temporary(let number):
            _hashValue = Int(truncatingIfNeeded: number) ^ Int(bitPattern: 0x9E37_79B9_7F4A_7C15)
        // Every entity hierarchy numbers its rows from 1: the entity's name tells their keys apart, or the IDs of
        // a model of many entities would all share a few hash values.
        case .primaryKey(let key):
            _hashValue = Int(truncatingIfNeeded: key) ^ entity._cachesUnretained._withUnsafeGuaranteedRef(\.nameHash)
        case .object(let reference): _hashValue = reference.hashValue
        }
        super.init()
    }

    private static let temporaryCounter = Atomic<UInt64>(1)
    /// Distinguishes this process's temporary IDs from any other process's, as Apple's UUID-based ones do.
    private static let temporaryPrefix = UUID().uuidString

    /// A new temporary ID for an object of `entity` being inserted.
    static func temporary(for entity: NSEntityDescription) -> NSManagedObjectID {
        let number = temporaryCounter.add(1, ordering: .relaxed).oldValue
        return NSManagedObjectID(entity: entity, store: nil, reference: .temporary(number))
    }

    /// The store the object lives in, while it is in use.
    var _store: NSPersistentStore? { _storeReference?.store }

    /// The identifier of the store when the ID was made.
    var _storeIdentifier: String? { _storeReference?.identifier }

    /// Whether the object lives in `store` (without taking a strong reference to the store).
    @inline(__always)
    func _isInStore(_ store: NSPersistentStore) -> Bool {
        guard let reference = _storeReference else { return false }
        return store._isCurrentObjectIDReference(reference) || reference.store === store
    }

    /// The entity of the object.
    public var entity: NSEntityDescription { _entity }

    /// The store the object lives in; `nil` for a temporary ID.
    public var persistentStore: NSPersistentStore? { _store }

    /// Whether the ID is temporary: the object has not been saved and the ID will change when it is.
    public var isTemporaryID: Bool {
        if case .temporary = _reference { return true }
        return false
    }

    /// Where an object stands in the order objects were made: its temporary ID's number, which grows with every
    /// insert; 0 for an ID that is already permanent.
    var _creationOrder: UInt64 {
        if case .temporary(let number) = _reference { return number }
        return 0
    }

    /// The row number for an ID of a SQL store.
    var _primaryKey: Int64? {
        if case .primaryKey(let key) = _reference { return key }
        return nil
    }

    /// A URI that names the object: `x-coredata://<store UUID>/<Entity>/p<n>` for a saved object,
    /// `x-coredata:///<Entity>/t<unique>` for a temporary one.
    public func uriRepresentation() -> URL {
        let entityName = _entity._name ?? ""
        let path: String
        switch _reference {
        case .temporary(let number):
            return URL(string: "x-coredata:///\(entityName)/t\(NSManagedObjectID.temporaryPrefix)\(number)")!
        case .primaryKey(let key):
            path = "p\(key)"
        case .object(let reference):
            path = "p\(reference.base)"
        }
        let host = _storeIdentifier ?? ""
        let encoded = path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path
        return URL(string: "x-coredata://\(host)/\(entityName)/\(encoded)")!
    }

    public func copy(with zone: NSZone? = nil) -> Any { self }

    public override func isEqual(_ object: Any?) -> Bool {
        if let same = _isEqual(toReferenceIn: object) { return same }
        guard let other = object as? NSManagedObjectID else { return false }
        return _isEqual(to: other)
    }

    /// `isEqual(_:)` for an `Any?` that plainly holds a reference — typed `NSObject`, `NSManagedObjectID` or this ID's
    /// class, as sets and dictionaries of IDs box the other element when they compare through `NSObject`'s `==` —
    /// with a class check on the reference instead of the dynamic cast of the existential (about 400 instructions,
    /// for every comparison a save's sets of IDs make); `nil` to take the cast.
    @inline(__always)
    private func _isEqual(toReferenceIn object: Any?) -> Bool? {
        guard
            let reference = PlainReference.in(
                object, typedAs: NSObject.self, NSManagedObjectID.self, Swift.type(of: self))
        else { return nil }
        return Unmanaged<AnyObject>.fromOpaque(reference)._withUnsafeGuaranteedRef { other in
            guard let other = other as? NSManagedObjectID else { return false }
            return _isEqual(to: other)
        }
    }

    /// `isEqual(_:)` without the boxing in `Any` and the cast back, for the tables keyed by IDs.
    @inline(__always)
    func _isEqual(to other: NSManagedObjectID) -> Bool {
        if other === self { return true }
        switch (_reference, other._reference) {
        case (.primaryKey(let mine), .primaryKey(let theirs)):
            guard mine == theirs else { return false }
        case (.temporary(let mine), .temporary(let theirs)):
            return mine == theirs
        case (.object(let mine), .object(let theirs)):
            guard mine == theirs else { return false }
        default:
            return false
        }
        guard _entity === other._entity || _entity._name == other._entity._name else { return false }
        return _storeReference === other._storeReference || _storeIdentifier == other._storeIdentifier
    }

    public override var hash: Int { _hashValue }

    public override var description: String {
        let address = String(UInt(bitPattern: ObjectIdentifier(self).hashValue), radix: 16)
        return "0x\(address) <\(uriRepresentation().absoluteString)>"
    }
}

extension NSManagedObjectID.Reference {
    /// The reference for a store's reference object (an atomic or incremental store's key for an object): integers
    /// become primary keys, as a SQL store's are; strings and other hashable values are kept as they are.
    init(referenceObject data: Any) {
        switch data {
        case let number as Int64: self = .primaryKey(number)
        case let number as Int: self = .primaryKey(Int64(number))
        case let string as String: self = .object(AnyHashable(string))
        case let string as NSString: self = .object(AnyHashable(string as String))
        case let number as NSNumber
        where !(number is NSDecimalNumber) && Double(number.int64Value) == number.doubleValue:
            self = .primaryKey(number.int64Value)
        case let hashable as AnyHashable: self = .object(hashable)
        default: self = .object(AnyHashable(String(describing: data)))
        }
    }

    /// The reference object this reference was made from (a number for a primary key).
    var referenceObject: Any {
        switch self {
        case .primaryKey(let key): return NSNumber(value: key)
        case .object(let reference): return reference.base
        case .temporary(let number): return NSNumber(value: number)
        }
    }
}

/// A store as its object IDs hold it: weakly, with the identifier it had when they were made. One per store and
/// identifier, shared by all the IDs made for it.
final class ObjectIDStoreReference: @unchecked Sendable {
    // @unchecked: `store` is a weak reference, which Swift reads and clears atomically; nothing else changes.
    weak var store: NSPersistentStore?
    let identifier: String?
    /// Whether contexts tell the store when they register and unregister the objects (an `NSIncrementalStore`'s
    /// `managedObjectContextDidRegisterObjects(with:)`): a flag here, so that registering an object of another
    /// store costs one load rather than a cast.
    let tracksRegistration: Bool

    init(store: NSPersistentStore, identifier: String?) {
        self.store = store
        self.identifier = identifier
        tracksRegistration = store is NSIncrementalStore && !(store is PersistentStoreIgnoringRegistration)
    }
}
