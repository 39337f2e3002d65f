/// Registering, inserting, deleting and finding objects.
extension NSManagedObjectContext {
    /// Every object registered in the context.
    public var registeredObjects: Set<NSManagedObject> {
        _assertOnQueue()
        return Set(_registry.values.map { $0.takeUnretainedValue() })
    }

    /// The objects inserted and not yet saved.
    public var insertedObjects: Set<NSManagedObject> {
        _assertOnQueue()
        return Set(_inserted.objects)
    }

    /// The objects changed and not yet saved (inserted and deleted objects excluded).
    public var updatedObjects: Set<NSManagedObject> {
        _assertOnQueue()
        return Set(_updated.objects)
    }

    /// The objects deleted and not yet saved.
    public var deletedObjects: Set<NSManagedObject> {
        _assertOnQueue()
        return Set(_deleted.objects)
    }

    /// Whether the context has unsaved changes.
    public var hasChanges: Bool {
        _assertOnQueue()
        return !_inserted.isEmpty || !_deleted.isEmpty || _pendingDeletes.contains { !$0._flags.contains(.inserted) }
            || _updated.contains { $0.hasChanges }
    }

    // MARK: Registry

    func _register(_ object: NSManagedObject) {
        _registry.register(object)
        if _retainsRegisteredObjects { _retained[ObjectIdentifier(object)] = object }
        if object._objectID._storeReference?.tracksRegistration == true {
            _tellStores(registered: true, [object._objectID])
        }
    }

    /// The registered objects, held strongly: what loops that change objects (and so may release others, which
    /// then unregister themselves) must iterate instead of the registry itself.
    func _registeredObjectsSnapshot() -> [NSManagedObject] {
        _registry.values.map { $0.takeUnretainedValue() }
    }

    func _unregister(_ object: NSManagedObject) {
        _removeFromRegistry(object)
        if !_retained.isEmpty { _retained[ObjectIdentifier(object)] = nil }
    }

    /// Removes `object`'s entry from the registry if it is the object registered under its ID (another may be, when
    /// this one was replaced), in one probe of the table.
    @inline(__always)
    func _removeFromRegistry(_ object: NSManagedObject) {
        if _registry.removeObject(object), object._objectID._storeReference?.tracksRegistration == true {
            _tellStores(registered: false, [object._objectID])
        }
    }

    /// Orders an object's going away with its context's going away.
    ///
    /// Each goes away on whichever thread drops the last reference to it, so an object and its context can go
    /// away at the same moment on two threads (a thread that held fetched objects ends just as the code that made
    /// the context lets go of it). The object's `deinit` reaches into its context (to leave the registry), and the
    /// context's `deinit` reaches into its objects (to disconnect them): both do so holding this lock, so that
    /// whichever comes second finds the first's work done. The context never retains an object while it holds the
    /// lock — one whose last reference is already gone, and whose `deinit` is waiting for the lock, must not be
    /// retained again. Recursive, because giving up an object's values can release other objects of the context.
    ///
    /// Objects are confined to their context's queue while the context is in use (as on Apple platforms): this
    /// orders going away, not an object released on another thread while its context fetches on its queue.
    static let _lifetimeLock = NSRecursiveLock()

    /// Called from an object's `deinit`: it leaves its context's registry and gives up its values.
    static func _objectWillGoAway(_ object: NSManagedObject) {
        _lifetimeLock.lock()
        defer { _lifetimeLock.unlock() }
        object._withContext { context in
            // The batched result may hold this object unretained: it is given up before it could dangle.
            context._batchResidency = nil
            if !context._partialObjects.isEmpty { context._partialObjects[ObjectIdentifier(object)] = nil }
            context._removeFromRegistry(object)
            context._giveUpValues(of: object)
        }
    }

    /// Drops `object`'s values and tells the stores, so that they forget its row if no other object holds it: what
    /// an object's going away, or its context's, does.
    func _giveUpValues(of object: NSManagedObject) {
        guard !object._values.isEmpty || object._committed != nil else { return }
        var values = StoredValues()
        swap(&values, &object._values)
        var committed: StoredValues?
        swap(&committed, &object._committed)
        // A store's row cache keeps a row while some object shares its values. Values that only this object held
        // share nothing with a row the store was handed them for, so giving them up cannot leave one unused: the
        // stores are not asked (two locks, about 350 instructions an object, as the objects of a fetch too large for
        // the cache, or of a to-many fault, go away). Unless this context saved the object: a store may keep a row of
        // a save that shares nothing from the start (see `Flags.savedHere`).
        if let held = committed, held._sharesStorage(with: values) { committed = nil }
        let shared =
            object._flags.contains(.savedHere) || !values.isUnshared() || committed?.isUnshared() == false
        values = []
        committed = nil
        guard shared else { return }
        unowned(unsafe) let objectID = object._objectID
        _rowWentAway(objectID)
    }

    /// Disconnects every registered object from the context as it goes away, without retaining any (see
    /// `_lifetimeLock`): each becomes a fault without a context, and the values taken from them are returned, to
    /// be released once no object is being walked any more (releasing them can end other objects).
    func _disconnectRegisteredObjects() -> [StoredValues] {
        let entries = Array(_registry.values)
        _registry = [:]
        var taken: [StoredValues] = []
        for entry in entries {
            entry._withUnsafeGuaranteedRef { $0._context = nil }
        }
        for entry in entries {
            entry._withUnsafeGuaranteedRef { object in
                object._flags.insert(.fault)
                guard !object._values.isEmpty || object._committed != nil else { return }
                taken.append(object._values)
                object._values = []
                if let committed = object._committed {
                    taken.append(committed)
                    object._committed = nil
                }
                _rowWentAway(object._objectID)
            }
        }
        _tellStores(registered: false, entries.map { $0._withUnsafeGuaranteedRef(\._objectID) })
        return taken
    }

    /// Tells the coordinator that the context no longer holds the row of `objectID`.
    private func _rowWentAway(_ objectID: NSManagedObjectID) {
        guard !objectID.isTemporaryID else { return }
        if let coordinator = _coordinatorReference {
            coordinator._withUnsafeGuaranteedRef { $0._objectWentAway(objectID) }
        } else {
            _parentContext?.persistentStoreCoordinator?._objectWentAway(objectID)
        }
    }

    /// Gives a registered object a new ID (a temporary one becoming permanent).
    func _changeID(of object: NSManagedObject, to newID: NSManagedObjectID) {
        let oldID = object._objectID
        // One probe that finds and removes the entry, if it is this object's.
        var removed = false
        _registry.removeValue(forKey: oldID) {
            removed = $0.takeUnretainedValue() === object
            return removed
        }
        if removed, oldID._storeReference?.tracksRegistration == true { _tellStores(registered: false, [oldID]) }
        object._objectID = newID
        _registry.register(object)
        if newID._storeReference?.tracksRegistration == true { _tellStores(registered: true, [newID]) }
        if oldID.isTemporaryID, !newID.isTemporaryID, !_children.isEmpty { _successors[oldID] = newID }
    }

    /// Gives the objects this context saved into its parent the permanent IDs the parent has since given them (by
    /// saving to its store), so that the child's objects stay unique: a fetch that finds their rows returns them,
    /// not second objects. Work already queued on the parent (its save, often) runs first.
    func _adoptPermanentIDs() {
        guard !_awaitingPermanentIDs.isEmpty, let parent = _parentContext else { return }
        let awaiting = _awaitingPermanentIDs
        let found = parent._asParent {
            awaiting.compactMap { id in parent._successors.removeValue(forKey: id).map { (id, $0) } }
        }
        guard !found.isEmpty else { return }
        for (temporary, permanent) in found {
            if let object = _registry[temporary]?.takeUnretainedValue() { _changeID(of: object, to: permanent) }
        }
        let adopted = Set(found.map(\.0))
        _awaitingPermanentIDs.removeAll { adopted.contains($0) }
    }

    /// The entity of the context's model whose objects are of `objectClass` (for `init(context:)`). The last answer
    /// is kept: objects are mostly made many of one class at a time, and the registry's answer takes a lock. (Asking
    /// for the model first, as this did, cost more than the rest of making an object's entity known: the model comes
    /// through the parent, and models and entities are weakly referenced, so each retain of one is slow.)
    func _entity(for objectClass: NSManagedObject.Type) -> NSEntityDescription? {
        if _lastEntityClass == ObjectIdentifier(objectClass), let entity = _lastEntityOfClass { return entity }
        let model = _model
        guard let entity = ManagedObjectClassRegistry.entity(for: objectClass, in: model) else { return nil }
        // A coordinator's model never changes; an editable model may still change which entity names the class, and
        // a parent context's model is its parent's, which this context does not watch.
        if !model._isEditable, _parentContext == nil {
            _lastEntityClass = ObjectIdentifier(objectClass)
            _lastEntityOfClass = entity
        }
        return entity
    }

    /// The object registered under `objectID`.
    public func registeredObject(for objectID: NSManagedObjectID) -> NSManagedObject? {
        _assertOnQueue()
        return _registry[objectID]?.takeUnretainedValue()
    }

    /// The object for `objectID`: the registered one, or a new fault (which loads its values when first touched).
    /// An ID of an object that does not exist gives a fault that cannot be fulfilled; use
    /// `existingObject(with:)` to check.
    public func object(with objectID: NSManagedObjectID) -> NSManagedObject {
        _assertOnQueue()
        if let registered = _registry[objectID] { return registered.takeUnretainedValue() }
        _adoptPermanentIDs()
        if let registered = _registry[objectID] { return registered.takeUnretainedValue() }
        return _materialize(objectID, row: nil)
    }

    /// The object for `objectID`, loading its values; throws if the object does not exist.
    public func existingObject(with objectID: NSManagedObjectID) throws -> NSManagedObject {
        _assertOnQueue()
        if _registry[objectID] == nil { _adoptPermanentIDs() }
        if let registered = _registry[objectID]?.takeUnretainedValue() {
            if registered.isFault { _fulfillFault(of: registered) }
            guard !registered._flags.contains(.inaccessible) else { throw _missingObjectError(objectID) }
            return registered
        }
        guard !objectID.isTemporaryID, let row = try _parentStore?._row(for: objectID, for: self) else {
            throw _missingObjectError(objectID)
        }
        let object = withUnsafePointer(to: row) { _materialize(objectID, row: $0) }
        object.awakeFromFetch()
        return object
    }

    func _missingObjectError(_ objectID: NSManagedObjectID) -> NSError {
        coreDataError(
            NSManagedObjectReferentialIntegrityError,
            "The object \(objectID.uriRepresentation().absoluteString) does not exist in the store",
            userInfo: [NSAffectedObjectsErrorKey: [objectID]])
    }

    /// A new registered object for a stored object: a fault, or filled with `row` (only read during the call).
    /// (Not inlined: inlined into the loop over a fetch's rows, it cost that loop retains and releases of its own.)
    @inline(never)
    func _materialize(
        _ objectID: NSManagedObjectID, row: UnsafePointer<StoreRow>?, objectClass: NSManagedObject.Type? = nil
    ) -> NSManagedObject {
        let objectClass =
            _isBatchExecutor
            ? NSManagedObject.self : objectClass ?? ManagedObjectClassRegistry.objectClass(for: objectID._entity)
        let object = NSManagedObject._makeExisting(objectClass, objectID: objectID, context: self, row: row)
        _register(object)
        return object
    }

    /// Loads the values of a fault, from the parent store; an object the store no longer has becomes an
    /// inaccessible, deleted-looking object (Apple's `shouldDeleteInaccessibleFaults`).
    func _fulfillFault(of object: NSManagedObject) {
        guard object._flags.contains(.fault) else { return }
        if let residency = _batchResidency, !_isEvaluatingFetch { residency.touch(object, in: self) }
        if !object._values.isEmpty {
            // Values read while a fetch is evaluated in memory leave the object a fault, as the fetch returns it.
            if _isEvaluatingFetch { return }
            // Fetched with its values: firing the fault only makes them visible.
            object._flags.remove(.fault)
            object.awakeFromFetch()
            return
        }
        let row: StoreRow?
        if object._objectID.isTemporaryID {
            row = nil
        } else {
            row = try? _parentStore?._row(for: object._objectID, for: self)
        }
        if let row, _isEvaluatingFetch {
            object._values = row.values
            object._committed = row.values
            object._version = row.version
            return
        }
        object._flags.remove(.fault)
        if !_partialObjects.isEmpty { _partialObjects[ObjectIdentifier(object)] = nil }
        if let row {
            object._values = row.values
            object._committed = row.values
            object._version = row.version
            object._applyTransientDefaults()
            object.awakeFromFetch()
        } else {
            precondition(
                shouldDeleteInaccessibleFaults,
                "CoreData could not fulfill a fault for '\(object._objectID.uriRepresentation().absoluteString)'")
            object._values = StoredValues(repeating: .null, count: object._layout.slots.count)
            for slot in object._layout.slots.indices {
                if case .toMany = object._layout.kinds[slot] {
                    object._values[slot] = .toMany(RelationshipContents())
                }
            }
            object._flags.insert(.inaccessible)
        }
    }

    /// The destinations of a to-many relationship of a stored object.
    func _destinationIDs(of object: NSManagedObject, slot: Int) throws -> [NSManagedObjectID] {
        guard let relationship = object._layout.slots[slot].property as? NSRelationshipDescription,
            !object._objectID.isTemporaryID, let parent = _parentStore
        else { return [] }
        return try parent._destinationIDs(of: relationship, from: object._objectID, for: self)
    }

    /// The destinations of a to-many relationship of a stored object, as registered objects: the registered
    /// object where there is one, else a new one holding its values if the store had them at hand (and reporting
    /// itself a fault until touched, as fetched objects do).
    func _destinationContents(of object: NSManagedObject, slot: Int) throws -> RelationshipContents {
        guard let relationship = object._layout.slots[slot].property as? NSRelationshipDescription,
            !object._objectID.isTemporaryID, let parent = _parentStore
        else { return RelationshipContents() }
        let rows = try parent._destinationRows(of: relationship, from: object._objectID, for: self)
        var objects: [NSManagedObject] = []
        objects.reserveCapacity(rows.count)
        var lastClass = LastObjectClass()
        // Whether every destination was made here: an object made for a row is registered at once, so a row that
        // named it again would have found it registered. Only then can an object be in the list twice (a join table
        // from elsewhere, without its primary key, may repeat a pair).
        var allMadeHere = true
        // The rows are read in place: a copy of each would retain and release its ID and values.
        rows.withUnsafeBufferPointer { rows in
            guard let first = rows.baseAddress else { return }
            for row in first..<first + rows.count {
                // The ID borrowed, not retained around each call (see `_register(_:for:)`).
                let destination = Unmanaged.passUnretained(row.pointee.objectID)._withUnsafeGuaranteedRef {
                    objectID -> NSManagedObject in
                    if let registered = _registry[objectID] {
                        allMadeHere = false
                        return registered.takeUnretainedValue()
                    }
                    let destination = _materialize(
                        objectID, row: row.pointee.values.isEmpty ? nil : row,
                        objectClass: lastClass.of(objectID._entity))
                    destination._flags.insert(.fault)
                    return destination
                }
                objects.append(destination)
            }
        }
        return allMadeHere ? RelationshipContents(distinct: objects) : RelationshipContents(objects)
    }

    /// The destinations of a to-many relationship as last saved.
    func _committedDestinationIDs(of object: NSManagedObject, slot: Int) throws -> [NSManagedObjectID] {
        try _destinationIDs(of: object, slot: slot)
    }

    // MARK: Inserting and deleting

    /// Inserts an object created without a context (or deleted in this one, which undoes the deletion).
    public func insert(_ object: NSManagedObject) {
        _assertOnQueue()
        if let owner = object._context, owner !== self {
            preconditionFailure(
                """
                An NSManagedObject may only be in (or observed by) a single NSManagedObjectContext: \
                \(object._objectID) belongs to context \(owner._debugName), not \(_debugName)
                """)
        }
        if object._flags.contains(.deleted) {
            _undelete(object)
            return
        }
        if object._context === self { return }
        if object._entity !== _lastInsertedEntity {
            precondition(
                object._entity !== NSManagedObject._noEntity,
                "insert(_:) of an object made with init(), which has no entity: make it with init(context:)")
            precondition(
                object._entity._model === _model || _model.entitiesByName[object._entity._name ?? ""] != nil,
                "The entity '\(object._entity._name ?? "")' is not part of the context's model")
            _lastInsertedEntity = object._entity
        }
        object._context = self
        // An object starts in a context with no event state: what it may carry is a context's that went away
        // before its event ended, whose list no longer stands for it.
        object._flags.subtract(.eventState)
        object._flags.insert(.inserted)
        _register(object)
        _inserted.insert(object)
        _enlistInEvent(object, as: .eventInserted)
        _noteEventChange()
        object.awakeFromInsert()
        if _registersUndo {
            _registerUndo(for: object, event: .undoInsertion) { object in
                object._context?._uninsert(object)
            }
        }
    }

    /// Undoes an insertion: the object leaves the context.
    func _uninsert(_ object: NSManagedObject) {
        guard _inserted.contains(object) else { return }
        _inserted.remove(object)
        object._flags.remove(.eventInserted)
        object._flags.remove(.inserted)
        _unregister(object)
        _noteEventChange()
        if _registersUndo {
            _registerUndo(for: object) { [unowned self] object in
                self.insert(object)
            }
        }
        object._context = nil
    }

    /// Marks an object deleted. Its delete rules apply when pending changes are processed (at the end of the
    /// event, or at the latest when saving); the store forgets it when the context saves.
    public func delete(_ object: NSManagedObject) {
        _assertOnQueue()
        guard object._context === self else {
            if object._context == nil { return }
            preconditionFailure(
                "delete(_:) of \(object._objectID), which belongs to another context (\(object._context!._debugName))")
        }
        guard !object._flags.contains(.deleted) else { return }
        object._fireFaultIfNeeded()
        if !_partialObjects.isEmpty { _completePartialFault(object) }
        object._flags.insert(.deleted)
        object._flags.insert(.pendingDeletePropagation)
        object._flags.remove(.eventListed)
        if object._flags.contains(.inserted) {
            // An object deleted before it was ever saved leaves the insertions and is not deleted from a store, but
            // observers of the end of the event hear of its deletion (fetched results controllers drop it, monitors
            // that heard of its insertion, or would have in this event, hear it is gone).
            _inserted.remove(object)
            object._flags.remove(.eventInserted)
        } else {
            // Out of the updated objects first: the lists share the object's place (see `ChangedObjects`).
            _updated.remove(object)
            _deleted.insert(object)
        }
        _enlistInEvent(object, as: .eventDeleted)
        object._flags.remove(.updated)
        _pendingDeletes.append(object)
        _noteEventChange()
        if _registersUndo {
            _registerUndo(for: object, event: .undoDeletion) { object in
                object._context?._undelete(object)
            }
        }
    }

    /// Undoes a deletion.
    func _undelete(_ object: NSManagedObject) {
        guard object._flags.contains(.deleted) else { return }
        object._flags.remove(.deleted)
        object._flags.remove(.pendingDeletePropagation)
        _pendingDeletes.removeAll { $0 === object }
        object._flags.remove(.eventDeleted)
        if object._flags.contains(.inserted) {
            _inserted.insert(object)
        } else {
            _deleted.remove(object)
            if !object._changed.isEmpty {
                object._flags.insert(.updated)
                _updated.insert(object)
            }
        }
        _noteEventChange()
        if _registersUndo {
            _registerUndo(for: object) { object in
                object._context?.delete(object)
            }
        }
    }

    /// Records an object whose values changed.
    func _registerUpdated(_ object: NSManagedObject) {
        // A changed object is validated and saved whole: a partial fault loads the rest first.
        if !_partialObjects.isEmpty { _completePartialFault(object) }
        _updated.insert(object)
        _enlistInEvent(object, as: .eventUpdated)
        _noteEventChange()
    }

    /// Notes a change of an object in the current event: it is listed as updated in the end-of-event
    /// notification (unless inserted in this event), and its per-event change record is cleared when the event ends.
    func _noteChange(of object: NSManagedObject) {
        _noteEventChange()
        // Every property set comes here: after the first in an event, the object's place is known.
        guard !object._flags.contains(.eventListed) else { return }
        _enlistInEvent(object, as: [])
        guard !object._flags.contains(.deleted) else { return }
        object._flags.insert(.eventListed)
        if !object._flags.contains(.eventInserted) {
            object._flags.insert(.eventUpdated)
        }
    }

    // MARK: Permanent IDs

    /// Gives the objects permanent IDs now, instead of when they are saved.
    public func obtainPermanentIDs(for objects: [NSManagedObject]) throws {
        _assertOnQueue()
        // Objects this context saved into its parent that the parent has since saved already have permanent IDs
        // there: they take those, not new ones (which would name no row).
        if objects.contains(where: { $0._objectID.isTemporaryID }) { _adoptPermanentIDs() }
        let temporary = objects.filter { $0._objectID.isTemporaryID }
        guard !temporary.isEmpty else { return }
        guard let parent = _parentStore else {
            throw coreDataError(
                NSPersistentStoreOperationError, "The context \(_debugName) has no coordinator to obtain IDs from")
        }
        let ids = try parent._permanentIDs(for: temporary, for: self)
        for (object, id) in zip(temporary, ids) where !id._isEqual(to: object._objectID) {
            _changeID(of: object, to: id)
        }
    }

    // MARK: Undo

    var _registersUndo: Bool {
        guard let undoManager = _undoManager else { return false }
        return undoManager.isUndoRegistrationEnabled
    }

    /// Registers the undo of a change of `object` with the context's undo manager. When an undo runs it, the
    /// object hears of it through `awakeFromSnapshotEvents(_:)`.
    func _registerUndo(
        for object: NSManagedObject, event: NSSnapshotEventType = .undoUpdate,
        _ handler: @escaping (NSManagedObject) -> Void
    ) {
        guard let undoManager = _undoManager else { return }
        undoManager.registerUndo(withTarget: object) { [weak undoManager] target in
            handler(target)
            if undoManager?.isUndoing == true { target.awakeFromSnapshotEvents(event) }
        }
    }

    /// Undoes the most recent undo group of the context's undo manager.
    public func undo() {
        _assertOnQueue()
        processPendingChanges()
        _undoManager?.undo()
        processPendingChanges()
    }

    /// Redoes the most recently undone group.
    public func redo() {
        _assertOnQueue()
        processPendingChanges()
        _undoManager?.redo()
        processPendingChanges()
    }

    // MARK: Fetched properties

    /// Evaluates a fetched property of `object`: its fetch request, with `$FETCH_SOURCE` standing for the
    /// object and `$FETCHED_PROPERTY` for the property.
    func _evaluateFetchedProperty(slot: Int, of object: NSManagedObject) -> [Any] {
        guard let property = object._layout.slots[slot].property as? NSFetchedPropertyDescription,
            let template = property._fetchRequest
        else { return [] }
        let request = template.copy() as! NSFetchRequest<NSFetchRequestResult>
        if request.entity == nil, let name = request.entityName { request.entity = _model.entitiesByName[name] }
        if let predicate = request.predicate {
            request.predicate = predicate.withSubstitutionVariables([
                "FETCH_SOURCE": object, "FETCHED_PROPERTY": property,
            ])
        }
        return (try? fetch(request)) ?? []
    }
}
