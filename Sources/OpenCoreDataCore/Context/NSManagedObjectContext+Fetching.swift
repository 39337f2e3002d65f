/// Fetching: the store answers from what is saved; the context folds in what is not.
extension NSManagedObjectContext {
    /// The objects (or IDs, counts, dictionaries — per `resultType`) that match `request`.
    ///
    /// With `includesPendingChanges` (the default), unsaved changes count: inserted objects that match are
    /// included, deleted ones are not, and changed ones are judged by their current values.
    public func fetch<T>(_ request: NSFetchRequest<T>) throws -> [T] {
        _assertOnQueue()
        if let objectClass = T.self as? NSManagedObject.Type { ManagedObjectClassRegistry.register(objectClass) }
        // A predicate from a user or a file may name a key the entity lacks, or a method nobody answers: the fetch
        // throws (Apple raises an exception) instead of stopping the program.
        let outcome = try PredicateFunctionDispatch.throwingEvaluationFailures(
            "The fetch of '\(request.entityName ?? request.entity?.name ?? "")'"
        ) {
            // A typed request is copied as an untyped one, which the fetch may then change as its own.
            if let untyped = request as? NSFetchRequest<NSFetchRequestResult> { return try _executeRequest(untyped) }
            return try _executeRequest(request._untyped, owningRequest: true)
        }
        switch outcome {
        case .objects(let objects):
            // When `T` is `NSManagedObject`, or the class of every object (the usual case), the array of objects
            // already is an array of `T`: it is reinterpreted, as the standard library does on Apple platforms once it
            // has checked the elements, rather than cast element by element (300 instructions each on Linux, where
            // `as! [T]` maps). Only for class types: an array of an existential `T` is laid out differently (hence
            // no empty array either, whose reserved capacity is for class references).
            if objects.isEmpty { return [] }
            if T.self == NSManagedObject.self
                || objects.allSatisfy({ ObjectIdentifier(type(of: $0)) == ObjectIdentifier(T.self) })
            {
                return unsafeBitCast(objects, to: [T].self)
            }
            return Self._cast(objects, of: request)
        case .objectsOfOneClass(let objects):
            // As above, with the class of every object the class of the first (which the fetch found as it made
            // them): looking at each object again, after a large fetch had pushed them out of the processor's caches,
            // cost more than the rest of the cast.
            if T.self == NSManagedObject.self || ObjectIdentifier(type(of: objects[0])) == ObjectIdentifier(T.self) {
                return unsafeBitCast(objects, to: [T].self)
            }
            return Self._cast(objects, of: request)
        case .results(let results):
            return Self._cast(results, of: request)
        }
    }

    /// `results` cast one by one to the request's result type. Apart from `fetch(_:)`, whose every call would
    /// otherwise look up the metadata of `T?` that only these casts need.
    @inline(never)
    private static func _cast<T, Element>(_ results: [Element], of request: NSFetchRequest<T>) -> [T] {
        results.map { result in
            guard let typed = result as? T else {
                preconditionFailure(
                    """
                    The fetch of '\(request.entityName ?? "")' returned a \(type(of: result)), not a \(T.self): set the \
                    entity's managedObjectClassName (representedClassName in Xcode's editor) to the class
                    """)
            }
            return typed
        }
    }

    /// The number of objects `request` would return.
    public func count<T>(for request: NSFetchRequest<T>) throws -> Int {
        _assertOnQueue()
        let untyped = request._untyped.copy() as! NSFetchRequest<NSFetchRequestResult>
        untyped.resultType = .countResultType
        let results = try PredicateFunctionDispatch.throwingEvaluationFailures(
            "Counting '\(request.entityName ?? request.entity?.name ?? "")'"
        ) { try _execute(untyped) }
        return (results.first as? NSNumber)?.intValue ?? 0
    }

    /// Resolves the request's entity against the context's model.
    func _resolveEntity(_ request: NSFetchRequest<NSFetchRequestResult>) -> NSEntityDescription {
        if let entity = request._entity {
            if let name = entity._name, let own = _model.entitiesByName[name], own !== entity, entity._model !== _model
            {
                return own
            }
            return entity
        }
        guard let name = request._entityName else {
            preconditionFailure("executeFetchRequest: A fetch request must have an entity.")
        }
        // Code fetches by the same name again and again; the model, through the parent, and a dictionary lookup that
        // hashes the name were a fiftieth of a lookup by an indexed attribute.
        if let entity = _lastFetchedEntity, _lastFetchedEntityName == name { return entity }
        let model = _model
        guard let entity = model.entitiesByName[name] else {
            preconditionFailure(
                "executeFetchRequest: could not locate an entity named '\(name)' in the context's model")
        }
        // Only where the model cannot change under the context (as for `_entity(for:)`).
        if !model._isEditable, _parentContext == nil {
            _lastFetchedEntityName = name
            _lastFetchedEntity = entity
        }
        return entity
    }

    /// Whether unsaved changes in this context concern objects of `entity`.
    func _hasPendingChanges(for entity: NSEntityDescription, includingSubentities: Bool) -> Bool {
        // Most fetches come from a context without changes; asking each set for its values retains its storage.
        if _inserted.isEmpty, _updated.isEmpty, _deleted.isEmpty { return false }
        func concerns(_ object: NSManagedObject) -> Bool {
            includingSubentities ? object._entity.isKindOf(entity: entity) : object._entity === entity
        }
        return _inserted.contains(where: concerns) || _updated.contains(where: concerns)
            || _deleted.contains(where: concerns)
    }

    /// What a fetch gives: managed objects (kept as such, for `fetch(_:)` to cast cheaply) — known to be one or more
    /// objects of one class, when the fetch found that as it made them — or other results.
    enum FetchOutcome {
        case objects([NSManagedObject])
        case objectsOfOneClass([NSManagedObject])
        case results([NSFetchRequestResult])
    }

    func _execute(_ original: NSFetchRequest<NSFetchRequestResult>) throws -> [NSFetchRequestResult] {
        switch try _executeRequest(original) {
        case .objects(let objects), .objectsOfOneClass(let objects): return objects
        case .results(let results): return results
        }
    }

    /// Runs a fetch; with `owningRequest`, `original` is a copy made for this fetch, which it may change.
    func _executeRequest(_ original: NSFetchRequest<NSFetchRequestResult>, owningRequest: Bool = false) throws
        -> FetchOutcome
    {
        guard let parent = _parentStore else {
            throw coreDataError(
                NSPersistentStoreOperationError,
                "The context \(_debugName) has neither a persistent store coordinator nor a parent context")
        }
        _adoptPermanentIDs()
        let entity = _resolveEntity(original)
        let request = owningRequest ? original : original.copy() as! NSFetchRequest<NSFetchRequestResult>
        request.entity = entity
        if request.resultType == .dictionaryResultType {
            // Dictionaries describe the stores as they are, without unsaved changes, as Apple documents.
            return .results(try _fetchDictionaries(request, entity: entity))
        }
        if original.includesPendingChanges, _hasEventChanges || !_pendingDeletes.isEmpty {
            processPendingChanges()
        }
        let pending =
            request.includesPendingChanges
            && _hasPendingChanges(for: entity, includingSubentities: request.includesSubentities)

        // The store fetches objects; the context folds in its changes and applies limits afterwards if it must.
        // A copy only if the store's request differs from the context's.
        let resultType = request.resultType
        let storeRequest =
            pending
                || (resultType != .managedObjectResultType && resultType != .countResultType
                    && resultType != .managedObjectIDResultType)
            ? request.copy() as! NSFetchRequest<NSFetchRequestResult> : request
        let wantsCount = request.resultType == .countResultType
        if pending {
            storeRequest.fetchLimit = 0
            storeRequest.fetchOffset = 0
        }
        if pending || (request.resultType != .countResultType && request.resultType != .managedObjectIDResultType) {
            storeRequest.resultType = .managedObjectResultType
        }

        var objects: [NSManagedObject]
        // Whether the objects are of one class, as registering found (filtering and sorting keep it, unless they
        // leave no object; pending changes may add objects of other classes).
        var ofOneClass = false
        var mustFilter = false
        switch try parent._fetchRows(storeRequest, for: self) {
        case .count(let count):
            if wantsCount && !pending { return .results([NSNumber(value: count)]) }
            let rowsRequest = storeRequest.copy() as! NSFetchRequest<NSFetchRequestResult>
            rowsRequest.resultType = .managedObjectResultType
            switch try parent._fetchRows(rowsRequest, for: self) {
            case .rows(let rows): (objects, ofOneClass) = _register(rows, for: request)
            case .candidates(let rows):
                (objects, ofOneClass) = _register(rows, for: request)
                mustFilter = true
            case .objects(let found): objects = _adopt(found, for: request)
            case .count: objects = []
            }
        case .rows(let rows):
            (objects, ofOneClass) = _register(rows, for: request)
        case .candidates(let rows):
            (objects, ofOneClass) = _register(rows, for: request)
            mustFilter = true
        case .objects(let found):
            objects = _adopt(found, for: request)
        }

        if mustFilter || pending {
            let wasEvaluating = _isEvaluatingFetch
            _isEvaluatingFetch = true
            defer { _isEvaluatingFetch = wasEvaluating }
            if mustFilter, let predicate = request.predicate {
                objects = objects.filter { predicate.evaluate(with: $0) }
            }
            if pending {
                objects = _foldPendingChanges(into: objects, request: request, entity: entity)
                ofOneClass = false
            }
            if let descriptors = request.sortDescriptors, !descriptors.isEmpty {
                objects = objects.sorted(using: descriptors)
            }
        }
        if mustFilter || pending {
            if request.fetchOffset > 0 { objects = Array(objects.dropFirst(request.fetchOffset)) }
            if request.fetchLimit > 0 { objects = Array(objects.prefix(request.fetchLimit)) }
        }
        if let keyPaths = request.relationshipKeyPathsForPrefetching, !keyPaths.isEmpty {
            _prefetch(keyPaths, of: objects)
        }

        switch request.resultType {
        case .countResultType:
            return .results([NSNumber(value: objects.count)])
        case .managedObjectIDResultType:
            return .results(objects.map(\.objectID))
        default:
            if request.fetchBatchSize > 0, objects.count > request.fetchBatchSize {
                _batchResidency = BatchResidency(objects, batchSize: request.fetchBatchSize)
            }
            return ofOneClass && !objects.isEmpty ? .objectsOfOneClass(objects) : .objects(objects)
        }
    }

    /// Registers fetched rows as objects: the registered object for a row where there is one, else a new one; and
    /// whether there is at least one and all are of one class.
    func _register(_ rows: [StoreRow], for request: NSFetchRequest<NSFetchRequestResult>)
        -> (objects: [NSManagedObject], ofOneClass: Bool)
    {
        var objects: [NSManagedObject] = []
        objects.reserveCapacity(rows.count)
        if rows.count > 64 { _registry.reserveCapacity(_registry.count + rows.count) }
        let loadsValues = request.includesPropertyValues
        let asFaults = request.returnsObjectsAsFaults
        // A fetch with propertiesToFetch makes partial faults; their unloaded slots, per entity.
        let partialNames = request._partialPropertyNames
        var unfetched: [ObjectIdentifier: SlotSet] = [:]
        func markPartial(_ object: NSManagedObject) {
            guard let partialNames else { return }
            let entity = object._entity
            let slots =
                unfetched[ObjectIdentifier(entity)]
                ?? {
                    let slots = entity._unfetchedSlots(loading: partialNames)
                    unfetched[ObjectIdentifier(entity)] = slots
                    return slots
                }()
            if !slots.isEmpty { _partialObjects[ObjectIdentifier(object)] = slots }
        }
        var lastClass = LastObjectClass()
        // Returns the object rather than appending it: an array that a nested function changes is checked for
        // exclusive access at run time on every append.
        func register(_ pointer: UnsafePointer<StoreRow>) -> NSManagedObject {
            // The row's ID borrowed: read through the pointer, it would be retained around every call it is
            // passed to (the registry's lookup, the object's making) — the first touch of a cold allocation.
            Unmanaged.passUnretained(pointer.pointee.objectID)._withUnsafeGuaranteedRef { objectID in
                register(pointer, objectID)
            }
        }
        func register(_ pointer: UnsafePointer<StoreRow>, _ objectID: NSManagedObjectID) -> NSManagedObject {
            if let registered = _registry[objectID]?.takeUnretainedValue() {
                if registered._values.isEmpty, loadsValues, !pointer.pointee.values.isEmpty {
                    registered._values = pointer.pointee.values
                    registered._committed = pointer.pointee.values
                    registered._version = pointer.pointee.version
                    registered._applyTransientDefaults()
                    markPartial(registered)
                    if !asFaults {
                        registered._flags.remove(.fault)
                        registered.awakeFromFetch()
                    }
                } else if partialNames != nil {
                    // A partial row never replaces values the object has (a full snapshot, or its changes).
                } else if !_partialObjects.isEmpty, !registered.hasChanges, !pointer.pointee.values.isEmpty,
                    _partialObjects.removeValue(forKey: ObjectIdentifier(registered)) != nil
                {
                    // A partial fault fetched whole: it has all its values now.
                    registered._values = pointer.pointee.values
                    registered._committed = pointer.pointee.values
                    registered._version = pointer.pointee.version
                } else if request.shouldRefreshRefetchedObjects, !registered.hasChanges, !pointer.pointee.values.isEmpty
                {
                    registered._values = pointer.pointee.values
                    registered._committed = pointer.pointee.values
                    registered._version = pointer.pointee.version
                    registered.awakeFromSnapshotEvents(.refresh)
                }
                return registered
            }
            let object = _materialize(
                objectID, row: loadsValues && !pointer.pointee.values.isEmpty ? pointer : nil,
                objectClass: lastClass.of(objectID._entity))
            if !object._values.isEmpty { markPartial(object) }
            if object._values.isEmpty {
                object._flags.insert(.fault)
            } else if asFaults {
                // The values are at hand; the object still reports itself a fault until touched, as Apple's do.
                object._flags.insert(.fault)
            } else {
                object.awakeFromFetch()
            }
            return object
        }
        // The rows are read in place: a copy of each would retain and release its ID and values. Each object's class
        // is read while the object is at hand (`fetch(_:)` would otherwise read every object again to cast them).
        var objectClass: ObjectIdentifier?
        var classes = 0
        rows.withUnsafeBufferPointer { rows in
            guard let first = rows.baseAddress else { return }
            for pointer in first..<first + rows.count {
                let object = register(pointer)
                let ofClass = ObjectIdentifier(type(of: object))
                if ofClass != objectClass {
                    objectClass = ofClass
                    classes += 1
                }
                objects.append(consume object)
            }
        }
        return (objects, classes == 1)
    }

    /// Objects a store registered in this context itself (an incremental store's answer): loaded now if the request
    /// wants them with their values, as fetched objects are.
    func _adopt(_ found: [NSManagedObject], for request: NSFetchRequest<NSFetchRequestResult>) -> [NSManagedObject] {
        if request.includesPropertyValues, !request.returnsObjectsAsFaults {
            for object in found where object._flags.contains(.fault) { _fulfillFault(of: object) }
        }
        return found
    }

    /// Adds matching inserted and changed objects, removes deleted ones and those that no longer match.
    func _foldPendingChanges(
        into objects: [NSManagedObject], request: NSFetchRequest<NSFetchRequestResult>, entity: NSEntityDescription
    ) -> [NSManagedObject] {
        func concerns(_ object: NSManagedObject) -> Bool {
            request.includesSubentities ? object._entity.isKindOf(entity: entity) : object._entity === entity
        }
        func matches(_ object: NSManagedObject) -> Bool {
            request.predicate?.evaluate(with: object) ?? true
        }
        var seen = Set<ObjectIdentifier>()
        var result: [NSManagedObject] = []
        result.reserveCapacity(objects.count)
        for object in objects where !object._flags.contains(.deleted) {
            if object.hasChanges, !matches(object) { continue }
            if seen.insert(ObjectIdentifier(object)).inserted { result.append(object) }
        }
        for object in _updated where concerns(object) && !seen.contains(ObjectIdentifier(object)) {
            if !object._flags.contains(.deleted), matches(object) {
                seen.insert(ObjectIdentifier(object))
                result.append(object)
            }
        }
        let inserted = _inserted.filter { concerns($0) && !seen.contains(ObjectIdentifier($0)) && matches($0) }
        result.append(contentsOf: inserted.sorted { $0._objectID.hash < $1._objectID.hash })
        return result
    }

    /// Loads the destinations of relationship key paths for all `objects` at once.
    func _prefetch(_ keyPaths: [String], of objects: [NSManagedObject]) {
        for keyPath in keyPaths {
            var level = objects
            for component in keyPath.split(separator: ".") {
                var next: [NSManagedObject] = []
                for object in level {
                    guard let slot = object._layout.slotByName[String(component)] else { continue }
                    switch object._resolvedValue(at: slot) {
                    case .object(let destination): next.append(destination)
                    case .toMany(let contents): next.append(contentsOf: contents.objects)
                    default: break
                    }
                }
                for destination in next where destination.isFault {
                    destination._fireFault()
                }
                level = next
            }
        }
    }
}
