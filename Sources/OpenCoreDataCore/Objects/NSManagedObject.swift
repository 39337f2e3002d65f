/// A managed object: an instance of an entity, living in a managed object context, whose properties are read
/// and written by key (`value(forKey:)`) or through the typed properties of a subclass.
///
/// Subclasses declare their properties with `@Managed`, written exactly where Apple's `@NSManaged` would be:
///
/// ```swift
/// final class Employee: NSManagedObject {
///     @Managed var firstName: String?
///     @Managed var company: Company?
/// }
/// let employee = Employee(context: context)
/// employee.firstName = "Ada"
/// ```
///
/// A managed object belongs to one context and, like the context, is used only on that context's queue.
open class NSManagedObject: NSObject {
    struct Flags: OptionSet {
        let rawValue: UInt16
        /// The values have not been loaded: the object is a fault.
        static let fault = Flags(rawValue: 1 << 0)
        /// Inserted into the context and not saved yet.
        static let inserted = Flags(rawValue: 1 << 1)
        /// Deleted in the context and not saved yet.
        static let deleted = Flags(rawValue: 1 << 2)
        /// Listed in the context's updated objects.
        static let updated = Flags(rawValue: 1 << 3)
        /// Deleted in its context, and the deletion has been saved: the object is gone for good.
        static let deletedAndSaved = Flags(rawValue: 1 << 4)
        /// The store no longer has the object (its fault could not be fulfilled).
        static let inaccessible = Flags(rawValue: 1 << 5)
        /// A delete whose rules have not yet been applied (they are, in `processPendingChanges()`).
        static let pendingDeletePropagation = Flags(rawValue: 1 << 6)
        /// In the context's list of the current event's objects (`_eventObjects`), whose per-event state is cleared
        /// when the event ends.
        static let eventTouched = Flags(rawValue: 1 << 7)
        /// Changed in the current event and already listed as inserted or updated in it: further changes in the
        /// event need not look it up again (cleared with `eventTouched`, and when the object is deleted).
        static let eventListed = Flags(rawValue: 1 << 8)
        /// Inserted, updated, deleted or refreshed in the current event: what the objects-did-change notification
        /// at its end reports the object as. Set only on objects in the event's list (see `eventTouched`).
        static let eventInserted = Flags(rawValue: 1 << 9)
        static let eventUpdated = Flags(rawValue: 1 << 10)
        static let eventDeleted = Flags(rawValue: 1 << 11)
        static let eventRefreshed = Flags(rawValue: 1 << 12)
        /// The next save writes this object whatever the store's version (a merge policy decided so). A flag rather
        /// than side state: every save clears it, and reading the side state of each saved object cost a cache miss.
        static let forceNextSave = Flags(rawValue: 1 << 13)
        /// The object's committed values came from a save of this context. A store may then keep a copy of the row of
        /// its own that shares no storage with the object (the SQLite store's row of an object with to-many
        /// relationships, say): giving the values up asks the stores to forget the row whatever the object shares.
        static let savedHere = Flags(rawValue: 1 << 14)
        /// Every flag that lasts only until the end of the event.
        static let eventState: Flags = [
            .eventTouched, .eventListed, .eventInserted, .eventUpdated, .eventDeleted, .eventRefreshed,
        ]
    }

    // The mutable state below is read and written several times by every property access. Swift checks each such
    // access of a class's stored property for overlapping writes at run time, which cost as much as the access
    // itself; an object is confined to its context's queue and these are never handed out `inout` across calls
    // that could reach them again, so the check is switched off for them (`@exclusivity(unchecked)`).
    /// The entity's derived lookups, held directly so that property access needs no further indirection.
    let _layout: EntityCache
    @exclusivity(unchecked) var _objectID: NSManagedObjectID
    /// The context, unretained. The context clears this for every object it still knows of when it resets or goes
    /// away, so the reference never dangles; objects tell their context when they go away (see `deinit`).
    @exclusivity(unchecked) var _contextReference: Unmanaged<NSManagedObjectContext>?
    /// The current values, one per slot of `_layout`; empty while the object is a fault.
    @exclusivity(unchecked) var _values = StoredValues()
    /// The values as last fetched or saved (the store's view), for `committedValues(forKeys:)`, change tracking
    /// and refresh merges; `nil` for an object never saved.
    @exclusivity(unchecked) var _committed: StoredValues?
    /// Slots below 63 changed since the last save (bit n for slot n); the bit 63 says that the side state holds
    /// more (see `_changed`).
    @exclusivity(unchecked) var _changedBits: UInt64 = 0
    /// The store's version number of the committed values (Core Data's `Z_OPT`), for optimistic locking.
    @exclusivity(unchecked) var _version: Int64 = 0
    /// State that few objects ever need, allocated on first use, so that every object is smaller (see
    /// `ManagedObjectSideState`).
    @exclusivity(unchecked) var _sideState: ManagedObjectSideState?
    @exclusivity(unchecked) var _flags: Flags = []
    /// The object's place in its context's list of inserted, updated or deleted objects (see `ChangedObjects`);
    /// it fits beside `_flags` in the padding of the object's allocation.
    @exclusivity(unchecked) var _changeIndex: UInt32 = 0

    /// Creates an object of `entity` and, if a context is given, inserts it there.
    ///
    /// This is the designated initializer, and it is `required` because the framework creates instances of
    /// subclasses from their class name: a subclass that declares designated initializers of its own must also
    /// implement this one (calling `super`).
    public required init(entity: NSEntityDescription, insertInto context: NSManagedObjectContext?) {
        if let raw = NSManagedObject.existingObjectConstruction.value,
            case let existing = raw.assumingMemoryBound(to: ExistingObjectConstruction.self),
            existing.pointee.objectID._entity === entity
        {
            // The framework is materialising a stored object (see `_makeExisting`): no defaults, no insertion.
            NSManagedObject.existingObjectConstruction.value = nil
            _layout = existing.pointee.layout.takeUnretainedValue()
            _objectID = existing.pointee.objectID
            _contextReference = Unmanaged.passUnretained(existing.pointee.context)
            super.init()
            if let row = existing.pointee.row {
                _values = row.pointee.values
                _committed = row.pointee.values
                _applyTransientDefaults()
                _version = row.pointee.version
            } else {
                _flags = .fault
            }
            return
        }
        precondition(
            !entity._isAbstract,
            "Cannot create an instance of abstract entity '\(entity._name ?? "")'; create one of its subentities")
        _layout = entity._caches
        _objectID = .temporary(for: entity)
        super.init()
        _values = _initialValues()
        if let context {
            context.insert(self)
        }
    }

    /// An object with no entity, as Apple's framework makes one (with the same complaint) when code calls `init()`
    /// instead of a designated initializer. It holds no properties: reading or writing one stops the program, and
    /// it cannot be inserted or saved. Code uses such objects as placeholders (arguments of comparators in tests).
    public override convenience init() {
        let message =
            "CoreData: error: Failed to call designated initializer on NSManagedObject class '\(type(of: self))'\n"
        FileHandle.standardError.write(Data(message.utf8))
        self.init(entity: NSManagedObject._noEntity, insertInto: nil)
    }

    /// The entity of objects made with `init()`.
    static let _noEntity = NSEntityDescription()

    /// Creates an object of the entity whose class is this class, and inserts it into `context`.
    ///
    /// ```swift
    /// let company = Company(context: context)
    /// ```
    public required convenience init(context: NSManagedObjectContext) {
        let entity = type(of: self).entity(in: context)
        self.init(entity: entity, insertInto: context)
    }

    /// What `init(entity:insertInto:)` needs to materialise an object that already exists in a store or a
    /// parent context, passed on the side because subclasses are created through that required initializer. It
    /// lives on `_makeExisting`'s stack; the thread-local holds its address while the initializer runs.
    ///
    /// It holds nothing: the caller keeps the ID, its entity's cache, the context and the row alive while the
    /// initializer runs, and retaining and releasing each around the call was, with the atomic reference counting
    /// it takes, a measurable part of every fetched object's cost.
    struct ExistingObjectConstruction {
        unowned(unsafe) let objectID: NSManagedObjectID
        let layout: Unmanaged<EntityCache>
        unowned(unsafe) let context: NSManagedObjectContext
        /// The row with the stored values and their version; `nil` for a fault.
        let row: UnsafePointer<StoreRow>?
    }

    static let existingObjectConstruction = ThreadLocalPointer()

    /// An instance of `objectClass` for a stored object: a fault, or filled with the row's values (`row` is only
    /// read during the call).
    static func _makeExisting(
        _ objectClass: NSManagedObject.Type, objectID: NSManagedObjectID, context: NSManagedObjectContext,
        row: UnsafePointer<StoreRow>?
    ) -> NSManagedObject {
        unowned(unsafe) let entity = objectID._entity
        var construction = ExistingObjectConstruction(
            objectID: objectID, layout: entity._cachesUnretained, context: context, row: row)
        return withUnsafeMutablePointer(to: &construction) { pointer in
            existingObjectConstruction.value = UnsafeMutableRawPointer(pointer)
            defer { existingObjectConstruction.value = nil }
            return objectClass.init(entity: entity, insertInto: nil)
        }
    }

    deinit {
        NSManagedObjectContext._objectWillGoAway(self)
    }

    /// The context the object is registered in.
    var _context: NSManagedObjectContext? {
        @inline(__always) get { _contextReference?.takeUnretainedValue() }
        @inline(__always) set { _contextReference = newValue.map { Unmanaged.passUnretained($0) } }
    }

    /// Runs `body` with the object's context, if it has one, without retaining the context: what the accessors do
    /// for every change. Contexts are weakly referenced (by their coordinator and parent), which makes each retain
    /// and release of one take the runtime's slow path; the context outlives any call made on its queue.
    @inline(__always)
    func _withContext<Result>(_ body: (NSManagedObjectContext) -> Result) -> Result? {
        _contextReference?._withUnsafeGuaranteedRef(body)
    }

    /// The values a new object starts with: the attribute defaults; to-many relationships start empty.
    /// Gives the transient attributes of an object just loaded from its store their default values (a parent
    /// context, which stands in for the store of its children, may hand over transient values of its own).
    @inline(__always)
    func _applyTransientDefaults() {
        guard _layout.hasTransientDefaults else { return }
        for (slot, value) in _layout.transientDefaults where _values[slot].isNull { _values[slot] = value }
    }

    func _initialValues() -> StoredValues {
        _layout.initialValues
    }

    // MARK: Identity

    /// The object's entity: its ID's, which every object has from the start (and keeps, temporary or not).
    var _entity: NSEntityDescription {
        @inline(__always) get { _objectID._entity }
    }

    /// The object's entity.
    open var entity: NSEntityDescription { _entity }

    /// The object's ID: temporary until the object is saved.
    open var objectID: NSManagedObjectID { _objectID }

    /// The context the object belongs to; `nil` once it has been removed from it (deleted and saved, or the
    /// context was reset).
    open var managedObjectContext: NSManagedObjectContext? { _context }

    // MARK: State

    /// Whether the object has been inserted into its context and not saved since.
    open var isInserted: Bool { _flags.contains(.inserted) }

    /// Whether the object has unsaved changes to its persistent properties (and is not inserted or deleted).
    open var isUpdated: Bool { _flags.contains(.updated) }

    /// Whether the object will be deleted when its context saves.
    open var isDeleted: Bool { _flags.contains(.deleted) }

    /// Whether the object's values have not been loaded yet.
    open var isFault: Bool { _flags.contains(.fault) }

    /// Whether the object has been inserted, deleted or changed (transient properties included) since it was
    /// last saved.
    open var hasChanges: Bool {
        _flags.contains(.inserted) || _flags.contains(.deleted) || _changedBits != 0
    }

    /// Whether the object has changes to persistent properties that saving would write.
    open var hasPersistentChangedValues: Bool {
        _changed.elements.contains { _layout.slots[$0].isPersistent }
    }

    /// 0 if the object is fully realised, another value while it is a fault.
    open var faultingState: Int { isFault ? 1 : 0 }

    /// Whether the object is a fault that would have to load its values to answer for `key`. Relationships not
    /// yet loaded count as faults for their key.
    open func hasFault(forRelationshipNamed key: String) -> Bool {
        guard let slot = _slotIfAny(named: key) else { return false }
        if isFault { return true }
        switch _values[slot] {
        case .objectID: return true
        case .toManyFault: return true
        case .object(let destination): return destination.isFault
        default: return false
        }
    }

    /// The object IDs of a relationship's destinations, without firing any faults.
    open func objectIDs(forRelationshipNamed key: String) -> [NSManagedObjectID] {
        guard let slot = _slotIfAny(named: key), _layout.relationshipSlots.contains(slot) else {
            preconditionFailure("'\(key)' is not a relationship of entity '\(_entity._name ?? "")'")
        }
        if isFault, let context = _context { context._fulfillFault(of: self) }
        guard slot < _values.count else { return [] }
        switch _values[slot] {
        case .objectID(let id): return [id]
        case .object(let object): return [object.objectID]
        case .toMany(let contents): return contents.objects.map(\.objectID)
        case .toManyFault:
            return (try? _context?._destinationIDs(of: self, slot: slot)) ?? []
        default: return []
        }
    }

    // MARK: Class-level entity and fetch request

    /// The entity whose objects this class represents, found in the models in use.
    ///
    /// Called on `NSManagedObject` itself, or for a class no entity names, this is a programmer error.
    open class func entity() -> NSEntityDescription {
        guard let entity = ManagedObjectClassRegistry.entity(for: self, in: nil) else {
            preconditionFailure(
                """
                No entity in any loaded model has the class '\(String(reflecting: self))': set the entity's \
                managedObjectClassName (representedClassName in Xcode's editor) to this class's name
                """)
        }
        return entity
    }

    /// The entity for this class in the model of `context`.
    class func entity(in context: NSManagedObjectContext) -> NSEntityDescription {
        guard let entity = context._entity(for: self) else {
            preconditionFailure(
                """
                An NSManagedObject of class '\(String(reflecting: self))' must have a valid NSEntityDescription: \
                no entity of the context's model has this class. Set the entity's managedObjectClassName \
                (representedClassName in Xcode's editor) to '\(String(describing: self))'
                """)
        }
        return entity
    }

    /// A fetch request for the entity of this class.
    open class func fetchRequest() -> NSFetchRequest<NSFetchRequestResult> {
        let entity = entity()
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: entity._name ?? "")
        request.entity = entity
        return request
    }

    // MARK: Key-value coding

    /// The value of the property `key`: `NSNumber` for numbers and booleans, `String`, `Date`, `Data`, `UUID`,
    /// `URL`, `NSDecimalNumber`, the destination object of a to-one relationship, a `Set` (an `NSOrderedSet` if
    /// ordered) of a to-many relationship's objects; `nil` for no value. Reading fires the fault.
    ///
    /// Besides the entity's properties, the keys `objectID`, `entity`, `managedObjectContext` and `self` answer as
    /// `NSObject`'s key-value coding does for Apple's framework. Any other key stops with a message naming the
    /// entity and key (Apple raises `NSUnknownKeyException`).
    open func value(forKey key: String) -> Any? {
        guard let slot = _slotIfAny(named: key) else { return _valueForNonPropertyKey(key) }
        willAccessValue(forKey: key)
        let value = _resolvedValue(at: slot)
        didAccessValue(forKey: key)
        return _publicValue(value, slot: slot)
    }

    /// The value at a dotted key path (`"company.name"`), through to-one and to-many relationships, with the
    /// collection operators (`"employees.@count"`, `"employees.@avg.salary"`). Overridable, as on Apple platforms.
    open func value(forKeyPath keyPath: String) -> Any? {
        KeyValueCodingPath.value(of: self, components: KeyValueCodingPath.split(keyPath)[...])
    }

    /// Sets the property `key`, tracking the change (and its undo) and keeping relationship inverses in step.
    /// A value of the wrong type stops with a message naming the entity, key and expected type.
    open func setValue(_ value: Any?, forKey key: String) {
        _setValueThroughKeyValueCoding(value, forKey: key)
    }

    /// The value of `key` in the object's storage, without access notifications.
    open func primitiveValue(forKey key: String) -> Any? {
        let slot = _slot(forKey: key)
        return _publicValue(_resolvedValue(at: slot), slot: slot)
    }

    /// Sets the value of `key` in the object's storage, without change notifications and without touching
    /// relationship inverses — for use inside custom accessors, between `willChangeValue(forKey:)` and
    /// `didChangeValue(forKey:)`.
    open func setPrimitiveValue(_ value: Any?, forKey key: String) {
        _setPrimitiveValueThroughKeyValueCoding(value, forKey: key)
    }

    /// Called before the value of `key` is read; fires the fault. Override to observe access; call `super`.
    open func willAccessValue(forKey key: String?) {
        _fireFaultIfNeeded()
    }

    /// Called after the value of `key` was read. Override to observe access; call `super`.
    open func didAccessValue(forKey key: String?) {}

    /// Called before the value of `key` changes. Override to observe changes; call `super`.
    open func willChangeValue(forKey key: String) {}

    /// Called after the value of `key` changed. Override to observe changes; call `super`.
    open func didChangeValue(forKey key: String) {}

    /// A mutable set that stands for the to-many relationship `key`: adding and removing through it changes the
    /// relationship, with inverses and change tracking.
    ///
    /// ```swift
    /// company.mutableSetValue(forKey: "employees").add(employee)
    /// ```
    open func mutableSetValue(forKey key: String) -> NSMutableSet {
        _mutableSetProxy(forKey: key)
    }

    /// A mutable ordered set that stands for the ordered to-many relationship `key`.
    open func mutableOrderedSetValue(forKey key: String) -> NSMutableOrderedSet {
        _mutableOrderedSetProxy(forKey: key)
    }

    // MARK: Life cycle

    /// Called once, when the object is first inserted into a context. Override to set initial values (with
    /// primitive or ordinary setters); call `super`.
    open func awakeFromInsert() {}

    /// Called when the object's values are loaded from the store (its fault fires). Override to compute derived
    /// state; call `super`.
    open func awakeFromFetch() {}

    /// Called when the object's values change because of an undo, rollback, refresh or merge.
    open func awakeFromSnapshotEvents(_ flags: NSSnapshotEventType) {}

    /// Called before the object is saved (inserted, updated or deleted in the store).
    open func willSave() {}

    /// Called after the object was saved.
    open func didSave() {}

    /// Called before the object turns into a fault (refresh, reset, or after a deletion is saved).
    open func willTurnIntoFault() {}

    /// Called after the object turned into a fault.
    open func didTurnIntoFault() {}

    /// Called when the object is about to be deleted, before delete rules apply.
    open func prepareForDeletion() {}

    // MARK: Validation

    /// Validates `value` for `key`: the model's constraints (optionality, range, length, pattern, predicates,
    /// relationship counts), then `validate(value:forKey:)`. The value may be replaced by a corrected one.
    open func validateValue(_ value: AutoreleasingUnsafeMutablePointer<AnyObject?>, forKey key: String) throws {
        var boxed: Any? = value.pointee
        try _validateValue(&boxed, forKey: key)
        value.pointee = boxed.map { $0 as AnyObject }
    }

    /// The per-key validation hook: where Objective-C code writes `validate<Key>:error:`, override this and
    /// switch on `key`. Throw to reject the value; assign to `value` to correct it. The default accepts.
    ///
    /// A save calls it for every property of every inserted or updated object whose class overrides it (or inherits
    /// an override); objects of other classes skip it, and the `NSNumber` it would take to hand them a number.
    ///
    /// ```swift
    /// override func validate(value: inout Any?, forKey key: String) throws {
    ///     if key == "name", (value as? String)?.isEmpty == true { throw MyError.emptyName }
    ///     try super.validate(value: &value, forKey: key)
    /// }
    /// ```
    open func validate(value: inout Any?, forKey key: String) throws {}

    /// Validates the object before its insertion is saved: every property's value. Override to add
    /// inter-property checks; call `super`.
    open func validateForInsert() throws {
        try _validateAllProperties()
    }

    /// Validates the object before its changes are saved. Override to add inter-property checks; call `super`.
    open func validateForUpdate() throws {
        try _validateAllProperties()
    }

    /// Validates the object before its deletion is saved: no deny rule may forbid it. Override to add checks;
    /// call `super`.
    open func validateForDelete() throws {
        try _validateDeleteRules()
    }

    // MARK: Identity for hashing

    /// Managed objects are equal only to themselves, as in Apple's framework (which reserves `isEqual(_:)` and
    /// `hash`). The identity's bits, rather than `NSObject`'s hash of them: sets of objects are built for every
    /// to-many relationship read.
    open override var hash: Int { Int(bitPattern: ObjectIdentifier(self)) }

    open override func isEqual(_ object: Any?) -> Bool {
        if let same = _isIdentical(toReferenceIn: object) { return same }
        guard let other = object as? NSManagedObject else { return false }
        return other === self
    }

    /// Whether `object` is this object, answered from the existential's layout when it plainly holds a reference —
    /// its type is `NSObject`, `NSManagedObject` or this object's class (the static type a set's `==` boxes the
    /// other element as) — or `nil` to take the dynamic cast. `Set<NSManagedObject>` and the to-many accessors' sets
    /// compare elements through `NSObject`'s `==`, which boxes the other object in an `Any`; casting it back cost
    /// about 500 instructions and a retain and release per comparison.
    @inline(__always)
    private func _isIdentical(toReferenceIn object: Any?) -> Bool? {
        guard
            let reference = PlainReference.in(
                object, typedAs: NSObject.self, NSManagedObject.self, Swift.type(of: self))
        else { return nil }
        return reference == UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
    }

    // MARK: Description

    open override var description: String {
        let address = "0x" + String(UInt(bitPattern: ObjectIdentifier(self).hashValue), radix: 16)
        let className = String(describing: type(of: self))
        let head = "<\(className): \(address)> (entity: \(_entity._name ?? "(null)"); id: \(_objectID)"
        if isFault { return head + "; data: <fault>)" }
        let body = _layout.slots.indices.map { index in
            "    \(_layout.slots[index].name) = \(_describe(index));"
        }
        return head + "; data: {\n" + body.joined(separator: "\n") + "\n})"
    }

    private func _describe(_ slot: Int) -> String {
        guard slot < _values.count else { return "nil" }
        switch _values[slot] {
        case .null: return "nil"
        case .objectID(let id): return "\"\(id.uriRepresentation().absoluteString)\""
        case .object(let object): return "\"\(object.objectID.uriRepresentation().absoluteString)\""
        case .toManyFault: return "\"<relationship fault: '\(_layout.slots[slot].name)'>\""
        case .toMany(let contents):
            let ids = contents.objects.map { "    \"\($0.objectID.uriRepresentation().absoluteString)\"" }
            return "(\n" + ids.joined(separator: ",\n") + "\n)"
        case .string(let string): return string
        case .date(let date) where date.timeIntervalSinceReferenceDate.isNaN:
            // Foundation traps when it describes such a date, and a description must not crash.
            return "<date of NaN seconds>"
        default:
            return _values[slot].publicValue.map { String(describing: $0) } ?? "nil"
        }
    }
}
