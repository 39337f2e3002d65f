/// A context as the store of its child contexts: fetches see the parent's unsaved changes, and a child's save
/// becomes the parent's unsaved changes.
extension NSManagedObjectContext: ObjectStoreParent {
    /// Runs `body` with exclusive use of this context, from a child's queue. If the main thread is waiting for
    /// the child (directly or through other contexts) the main-queue parent is used in place, as the main thread
    /// cannot run it meanwhile — the hand-off that keeps a main-thread `performAndWait` on a child from
    /// deadlocking.
    func _asParent<T>(_ body: () throws -> T) rethrows -> T {
        try _performAndWait(body)
    }

    /// An object's values as a row for a child context.
    func _row(of object: NSManagedObject) -> StoreRow {
        object._fireFaultIfNeeded()
        return StoreRow(objectID: object._objectID, values: _storeValues(of: object), version: object._version)
    }

    func _fetchRows(_ request: NSFetchRequest<NSFetchRequestResult>, for context: NSManagedObjectContext) throws
        -> StoreFetchResult
    {
        try _asParent {
            if request.resultType == .countResultType {
                return .count(try count(for: request))
            }
            let objectsRequest = request.copy() as! NSFetchRequest<NSFetchRequestResult>
            objectsRequest.resultType = .managedObjectResultType
            let objects = try fetch(objectsRequest).compactMap { $0 as? NSManagedObject }
            return .rows(objects.map(_row(of:)))
        }
    }

    func _row(for objectID: NSManagedObjectID, for context: NSManagedObjectContext) throws -> StoreRow? {
        _asParent {
            let object: NSManagedObject
            if let registered = _registry[objectID]?.takeUnretainedValue() {
                object = registered
            } else {
                guard !objectID.isTemporaryID else { return nil }
                object = self.object(with: objectID)
            }
            object._fireFaultIfNeeded()
            if object._flags.contains(.inaccessible) || object._flags.contains(.deleted) { return nil }
            return _row(of: object)
        }
    }

    func _destinationIDs(
        of relationship: NSRelationshipDescription, from objectID: NSManagedObjectID,
        for context: NSManagedObjectContext
    ) throws -> [NSManagedObjectID] {
        _asParent {
            let object = _registry[objectID]?.takeUnretainedValue() ?? self.object(with: objectID)
            guard let slot = object._layout.slotByName[relationship._name] else { return [] }
            return object._toManyObjects(slot).filter { !$0.isDeleted }.map(\._objectID)
        }
    }

    func _destinationRows(
        of relationship: NSRelationshipDescription, from objectID: NSManagedObjectID,
        for context: NSManagedObjectContext
    ) throws -> [StoreRow] {
        try _destinationIDs(of: relationship, from: objectID, for: context).map {
            StoreRow(objectID: $0, values: [], version: 0)
        }
    }

    /// A parent context holds its objects' relationships in memory: nothing to prefetch.
    func _prefetchDestinations(
        of relationship: NSRelationshipDescription, from objectIDs: [NSManagedObjectID],
        for context: NSManagedObjectContext
    ) throws {}

    func _permanentIDs(for objects: [NSManagedObject], for context: NSManagedObjectContext) throws
        -> [NSManagedObjectID]
    {
        try _asParent {
            guard let parent = _parentStore else {
                throw coreDataError(NSPersistentStoreOperationError, "The context \(_debugName) has no store")
            }
            // An object the child saved into this context is one object here too: this context's copy takes the
            // permanent ID (or already has it, if this context saved it since), so that both name the same row when
            // this context saves. Only objects this context does not know get IDs from the store alone.
            var ids = [NSManagedObjectID?](repeating: nil, count: objects.count)
            var local: [(index: Int, object: NSManagedObject)] = []
            var unknown: [(index: Int, object: NSManagedObject)] = []
            for (index, object) in objects.enumerated() {
                let id = object._objectID
                if let successor = _successors[id] {
                    ids[index] = successor
                } else if let registered = _registry[id]?.takeUnretainedValue() {
                    local.append((index, registered))
                } else {
                    unknown.append((index, object))
                }
            }
            if !local.isEmpty {
                try obtainPermanentIDs(for: local.map(\.object))
                for (index, object) in local { ids[index] = object._objectID }
            }
            if !unknown.isEmpty {
                let obtained = try parent._permanentIDs(for: unknown.map(\.object), for: self)
                for ((index, _), id) in zip(unknown, obtained) { ids[index] = id }
            }
            return ids.map { $0! }
        }
    }

    /// A child's save: its changes become this context's unsaved changes.
    func _commit(_ changes: StoreSaveChanges, from context: NSManagedObjectContext) throws -> StoreSaveResult {
        _asParent {
            var result = StoreSaveResult()
            // First make sure every object the child mentions exists here, so relationships can be resolved.
            var local: [NSManagedObjectID: NSManagedObject] = [:]
            for change in changes.inserted {
                if let registered = _registry[change.objectID]?.takeUnretainedValue() {
                    local[change.objectID] = registered
                    continue
                }
                let object = NSManagedObject._makeExisting(
                    ManagedObjectClassRegistry.objectClass(for: change.objectID._entity), objectID: change.objectID,
                    context: self, row: nil)
                object._flags = []
                object._values = object._initialValues()
                object._flags.insert(.inserted)
                _register(object)
                _inserted.insert(object)
                _enlistInEvent(object, as: .eventInserted)
                _noteEventChange()
                local[change.objectID] = object
            }
            func resolve(_ id: NSManagedObjectID) -> NSManagedObject {
                local[id] ?? self.object(with: id)
            }
            for change in changes.inserted + changes.updated {
                let object = resolve(change.objectID)
                let slots =
                    changes.inserted.contains(where: { $0.objectID == change.objectID })
                    ? Array(object._layout.slots.indices) : change.changedSlots.elements
                for slot in slots {
                    let key = object._layout.slots[slot].name
                    switch object._layout.kinds[slot] {
                    case .attribute, .derived:
                        object._setAttribute(change.values[slot], at: slot, key: key)
                    case .toOne:
                        if case .objectID(let id) = change.values[slot] {
                            object._setToOne(resolve(id), at: slot, key: key, registerUndo: false)
                        } else {
                            object._setToOne(nil, at: slot, key: key, registerUndo: false)
                        }
                    case .toMany:
                        if let ids = change.toMany[slot] {
                            object._setToMany(ids.map(resolve), at: slot, key: key)
                        }
                    case .fetched:
                        break
                    }
                }
                result.versions[change.objectID] = object._version
            }
            for change in changes.deleted {
                let object = resolve(change.objectID)
                // The child already applied the delete rules; the parent only records the deletion.
                delete(object)
                object._flags.remove(.pendingDeletePropagation)
                _pendingDeletes.removeAll { $0 === object }
            }
            processPendingChanges()
            return result
        }
    }
}
