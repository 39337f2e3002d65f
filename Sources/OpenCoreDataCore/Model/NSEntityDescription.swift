import Foundation
import Synchronization

/// Where an entity keeps its cache: filled once, atomically; replaced by a new slot when an edit drops the cache.
///
/// The reference is kept as the bits of an `Atomic`, whose operations are inlined: the standard library's
/// `AtomicLazyReference` is generic code of another module that instantiates its type's metadata on every `load`,
/// about 500 instructions, and objects read their entity's cache whenever one is made.
final class EntityCacheSlot: Sendable {
    /// The cache, retained, as the bits of its address; 0 until stored.
    private let bits = Atomic<UInt>(0)

    /// The cache, if one has been stored.
    @inline(__always)
    func load() -> EntityCache? {
        loadUnretained()?.takeUnretainedValue()
    }

    /// The cache, if one has been stored, without a retain: the slot keeps it.
    @inline(__always)
    func loadUnretained() -> Unmanaged<EntityCache>? {
        let current = bits.load(ordering: .acquiring)
        guard current != 0 else { return nil }
        return Unmanaged<EntityCache>.fromOpaque(UnsafeRawPointer(bitPattern: current)!)
    }

    /// Stores `cache` if none is stored yet; returns the one stored (another thread's, if it was first).
    func storeIfNil(_ cache: EntityCache) -> EntityCache {
        let retained = Unmanaged.passRetained(cache)
        let desired = UInt(bitPattern: retained.toOpaque())
        let (exchanged, original) = bits.compareExchange(
            expected: 0, desired: desired, successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring)
        if exchanged { return cache }
        retained.release()
        return Unmanaged<EntityCache>.fromOpaque(UnsafeRawPointer(bitPattern: original)!).takeUnretainedValue()
    }

    deinit {
        let current = bits.load(ordering: .acquiring)
        if current != 0 {
            Unmanaged<EntityCache>.fromOpaque(UnsafeRawPointer(bitPattern: current)!).release()
        }
    }
}

/// The description of an entity: its name, the class of its managed objects, its properties and its place in an
/// inheritance hierarchy. Entities are to managed objects what classes are to instances, or tables to rows.
///
/// ```swift
/// let company = NSEntityDescription()
/// company.name = "Company"
/// company.managedObjectClassName = "Company"
/// company.properties = [name, employees]
/// ```
open class NSEntityDescription: NSObject, NSCopying, @unchecked Sendable {
    // @unchecked: a model is configured on one thread and then shared; once a coordinator uses it, it is immutable:
    // every setter stops through `_checkEditable`, as Apple's framework raises for a model in use.
    weak var _model: NSManagedObjectModel?
    var _name: String?
    var _managedObjectClassName: String?
    var _isAbstract = false
    var _ownProperties: [NSPropertyDescription] = []
    var _subentities: [NSEntityDescription] = []
    /// The entity this one inherits from (not retained: see `EntityReference`).
    var _superentity: NSEntityDescription? {
        get { _superentityReference.entity }
        set { _superentityReference = EntityReference(newValue) }
    }
    private var _superentityReference = EntityReference(nil)
    var _userInfo: [AnyHashable: Any]?
    var _versionHashModifier: String?
    var _renamingIdentifier: String?
    var _uniquenessConstraints: [[Any]] = []
    var _indexes: [NSFetchIndexDescription] = []
    var _compoundIndexes: [[Any]] = []
    /// The superentity's name while a model is assembled from a file, resolved once every entity exists.
    var _superentityName: String?

    /// Derived lookups, made when first needed and again after any edit. Once the model is frozen, threads may ask
    /// at once: the first cache stored is the one every thread gets. An entity's cache holds its inherited
    /// properties too, so that caches made for every entity of a deep hierarchy would grow with its depth squared;
    /// only the entities in use pay for theirs.
    var _cacheSlot = EntityCacheSlot()
    /// The version hash, computed with the others when the model is frozen (see `NSManagedObjectModel._freeze`).
    var _frozenVersionHash: Data?
    /// Ends with the entity, telling the references that do not keep it alive that it has gone.
    let _lifetime = EntityLifetime()

    public required override init() {
        super.init()
    }

    deinit {
        _lifetime.end()
    }

    /// The model this entity belongs to. Apple declares this `unowned(unsafe)`: an entity outside a model is a
    /// programmer error to ask.
    public var managedObjectModel: NSManagedObjectModel {
        guard let model = _model else {
            preconditionFailure("The entity '\(_name ?? "")' does not belong to a managed object model")
        }
        return model
    }

    /// The entity's name, unique in its model.
    open var name: String? {
        get { _name }
        set {
            _checkEditable("name")
            _name = newValue
            _model?._invalidateCaches()
        }
    }

    /// The name of the class of the entity's managed objects; `NSManagedObject` unless set.
    open var managedObjectClassName: String! {
        get { _managedObjectClassName ?? "NSManagedObject" }
        set {
            _checkEditable("managedObjectClassName")
            _managedObjectClassName = newValue
            _dropCache()
        }
    }

    /// Whether the entity is abstract: it cannot have instances of its own, only of its subentities.
    open var isAbstract: Bool {
        get { _isAbstract }
        set {
            _checkEditable("isAbstract")
            _isAbstract = newValue
        }
    }

    /// The entity's properties, inherited ones first. Setting it replaces the entity's own properties.
    open var properties: [NSPropertyDescription] {
        get { _caches.allProperties }
        set {
            _checkEditable("properties")
            var seen = Set<String>()
            for property in newValue {
                precondition(
                    !property._name.isEmpty, "A property of entity '\(_name ?? "")' has no name; name it first")
                precondition(
                    seen.insert(property._name).inserted,
                    "Entity '\(_name ?? "")' has two properties named '\(property._name)'")
                NSEntityDescription._checkPropertyName(property._name, entity: _name ?? "")
                if let owner = property._entity, owner !== self {
                    preconditionFailure(
                        """
                        The property '\(property._name)' already belongs to entity '\(owner._name ?? "")'; \
                        give entity '\(_name ?? "")' a copy of it instead
                        """)
                }
            }
            for property in _ownProperties where property._entity === self {
                property._entity = nil
            }
            _ownProperties = newValue
            for property in newValue {
                property._entity = self
            }
            _invalidateCaches()
        }
    }

    /// The properties by name, inherited ones included.
    open var propertiesByName: [String: NSPropertyDescription] { _caches.propertiesByName }

    /// The attributes by name, inherited ones included.
    open var attributesByName: [String: NSAttributeDescription] { _caches.attributesByName }

    /// The relationships by name, inherited ones included.
    open var relationshipsByName: [String: NSRelationshipDescription] { _caches.relationshipsByName }

    /// The relationships whose destination is `entity`.
    open func relationships(forDestination entity: NSEntityDescription) -> [NSRelationshipDescription] {
        _caches.allProperties.compactMap { property in
            guard let relationship = property as? NSRelationshipDescription,
                relationship._destinationEntity === entity
            else { return nil }
            return relationship
        }
    }

    /// The entity's direct subentities. Setting it makes this entity their superentity.
    open var subentities: [NSEntityDescription] {
        get { _subentities }
        set {
            _checkEditable("subentities")
            for old in _subentities where old._superentity === self {
                old._superentity = nil
                old._invalidateCaches()
            }
            _subentities = newValue
            for entity in newValue {
                precondition(entity !== self, "Entity '\(_name ?? "")' cannot be its own subentity")
                entity._superentity = self
                entity._superentityName = _name
                entity._invalidateCaches()
            }
            _invalidateCaches()
        }
    }

    /// The direct subentities by name.
    open var subentitiesByName: [String: NSEntityDescription] {
        Dictionary(_subentities.compactMap { entity in entity._name.map { ($0, entity) } }) { first, _ in first }
    }

    /// The entity this one inherits from, if any.
    open var superentity: NSEntityDescription? { _superentity }

    /// Whether this entity is `entity` or one of its subentities, at any depth.
    open func isKindOf(entity: NSEntityDescription) -> Bool {
        var current: NSEntityDescription? = self
        while let candidate = current {
            if candidate === entity { return true }
            current = candidate._superentity
        }
        return false
    }

    /// The user's own information about the entity.
    open var userInfo: [AnyHashable: Any]? {
        get { _userInfo }
        set {
            _checkEditable("userInfo")
            _userInfo = newValue
        }
    }

    /// A string that changes the version hash without a schema change.
    open var versionHashModifier: String? {
        get { _versionHashModifier }
        set {
            _checkEditable("versionHashModifier")
            _versionHashModifier = newValue
        }
    }

    /// The name this entity had in an earlier model version, for migration: a source entity and a destination
    /// entity with the same renaming identifier map onto each other. The entity's own name unless set, as in Apple's
    /// framework.
    open var renamingIdentifier: String? {
        get { _renamingIdentifier ?? _name }
        set {
            _checkEditable("renamingIdentifier")
            _renamingIdentifier = newValue
        }
    }

    /// The version hash: a digest of the entity's persistence-relevant settings and of its properties' hashes.
    open var versionHash: Data { ModelVersionHasher.versionHash(of: self) }

    /// Sets of properties whose values together must be unique among the entity's objects. Each element is a
    /// property name or an `NSPropertyDescription`.
    open var uniquenessConstraints: [[Any]] {
        get { _uniquenessConstraints }
        set {
            _checkEditable("uniquenessConstraints")
            _uniquenessConstraints = newValue
        }
    }

    /// The fetch indexes the store creates for this entity.
    open var indexes: [NSFetchIndexDescription] {
        get { _indexes }
        set {
            _checkEditable("indexes")
            _indexes = newValue
            for index in newValue {
                index._entity = self
            }
        }
    }

    /// Compound indexes, Apple's deprecated predecessor of `indexes`: arrays of property names or descriptions.
    open var compoundIndexes: [[Any]] {
        get { _compoundIndexes }
        set {
            _checkEditable("compoundIndexes")
            _compoundIndexes = newValue
        }
    }

    // MARK: Copying

    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = type(of: self).init()
        copy._name = _name
        copy._managedObjectClassName = _managedObjectClassName
        copy._isAbstract = _isAbstract
        copy._userInfo = _userInfo
        copy._versionHashModifier = _versionHashModifier
        copy._renamingIdentifier = _renamingIdentifier
        copy._uniquenessConstraints = _uniquenessConstraints.map { constraint in
            constraint.map { element in (element as? NSPropertyDescription)?._name ?? element }
        }
        copy._compoundIndexes = _compoundIndexes.map { index in
            index.map { element in (element as? NSPropertyDescription)?._name ?? element }
        }
        copy._superentityName = _superentity?._name ?? _superentityName
        copy._ownProperties = _ownProperties.map { property in
            let propertyCopy = property.copy() as! NSPropertyDescription
            propertyCopy._entity = copy
            return propertyCopy
        }
        copy._indexes = _indexes.map { index in
            let indexCopy = index.copy() as! NSFetchIndexDescription
            indexCopy._entity = copy
            return indexCopy
        }
        return copy
    }

    // MARK: Editability and caches

    func _checkEditable(_ key: String) {
        guard let model = _model, !model._isEditable else { return }
        preconditionFailure(
            """
            Can't modify an immutable model: '\(key)' of entity '\(_name ?? "")' in \(model._debugName) — the \
            model is in use by a persistent store coordinator. Copy the model (model.copy()) to edit it.
            """)
    }

    func _invalidateCaches() {
        _dropCache()
        for entity in _subentities {
            entity._invalidateCaches()
        }
    }

    /// Forgets the cache of this entity only (an editable model's entity, edited by one thread).
    func _dropCache() {
        if _cacheSlot.load() != nil { _cacheSlot = EntityCacheSlot() }
    }

    package var _caches: EntityCache {
        let slot = _cacheSlot
        if let cache = slot.load() { return cache }
        return slot.storeIfNil(EntityCache(entity: self))
    }

    /// `_caches` without retaining it (or its slot), for the reads made for every object loaded: the entity keeps
    /// its cache while it is in use (a model in use cannot be edited), and a retain and release are atomic
    /// operations, which cost more than the read itself.
    @inline(__always)
    var _cachesUnretained: Unmanaged<EntityCache> {
        unowned(unsafe) let slot = _cacheSlot
        if let cache = slot.loadUnretained() { return cache }
        return Unmanaged.passUnretained(_caches)
    }

    /// Names a property may not take, because `NSManagedObject` or `NSObject` already answers to them; a property
    /// so named could never be read or written through its accessors.
    static let reservedPropertyNames: Set<String> = [
        "description", "debugDescription", "entity", "objectID", "managedObjectContext", "isFault", "isDeleted",
        "isInserted", "isUpdated", "hasChanges", "hasPersistentChangedValues", "faultingState", "changedValues",
        "changedValuesForCurrentEvent", "committedValues", "class", "superclass", "self", "hash", "hashValue",
        "isProxy", "zone", "retainCount", "autorelease", "retain", "release", "copy", "mutableCopy", "init",
        "dealloc", "observationInfo", "classForCoder", "classForKeyedArchiver", "willSave", "didSave",
        "awakeFromInsert", "awakeFromFetch", "prepareForDeletion", "willTurnIntoFault", "didTurnIntoFault",
        "validateForInsert", "validateForUpdate", "validateForDelete",
    ]

    static func _checkPropertyName(_ name: String, entity: String) {
        precondition(
            !reservedPropertyNames.contains(name),
            """
            Entity '\(entity)' cannot have a property named '\(name)': NSManagedObject already uses that name, so \
            the property could not be read or written. Rename the property.
            """)
    }

    open override var description: String {
        let propertyList = _caches.allProperties.map { "\($0._name)" }.joined(separator: ", ")
        return "(\(_name ?? "(null)")) name \(_name ?? "(null)"), managedObjectClassName \(managedObjectClassName!)"
            + ", isAbstract \(_isAbstract), superentity name \(_superentity?._name ?? "(null)"), properties {"
            + propertyList + "}, subentities {"
            + _subentities.map { $0._name ?? "" }.joined(separator: ", ") + "}"
    }
}
