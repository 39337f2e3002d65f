/// Executing persistent store requests: batch updates, deletes and inserts go straight to the stores, without
/// changing the context's objects.
extension NSManagedObjectContext {
    /// Executes a batch request (`NSBatchUpdateRequest`, `NSBatchDeleteRequest`, `NSBatchInsertRequest`) in the
    /// stores of the context's coordinator, and returns its result. The context's objects are left as they are:
    /// merge the result's object IDs (`mergeChanges(fromRemoteContextSave:into:)`) to bring them up to date.
    /// An `NSAsynchronousFetchRequest` returns its `NSAsynchronousFetchResult` at once and runs afterwards.
    ///
    /// ```swift
    /// let request = NSBatchUpdateRequest(entityName: "Task")
    /// request.predicate = NSPredicate(format: "dueDate < %@", Date() as NSDate)
    /// request.propertiesToUpdate = ["overdue": true]
    /// request.resultType = .updatedObjectIDsResultType
    /// let result = try context.execute(request) as? NSBatchUpdateResult
    /// ```
    ///
    /// Throws `NSPersistentStoreUnsupportedRequestTypeError` for other requests, and for a predicate or value that
    /// the store cannot compute; a key that the entity does not have, or a value that the key cannot hold, throws an
    /// error whose `NSValidationKeyErrorKey` names the key.
    public func execute(_ request: NSPersistentStoreRequest) throws -> NSPersistentStoreResult {
        _assertOnQueue()
        switch request {
        case let update as NSBatchUpdateRequest:
            return try _executeBatchUpdate(update)
        case let delete as NSBatchDeleteRequest:
            return try _executeBatchDelete(delete)
        case let insert as NSBatchInsertRequest:
            return try _executeBatchInsert(insert)
        case let asynchronous as AsynchronousFetchStarting:
            return asynchronous._start(in: self)
        case let history as NSPersistentHistoryChangeRequest:
            guard let coordinator = persistentStoreCoordinator else {
                throw coreDataError(
                    NSPersistentStoreOperationError,
                    "The context \(_debugName) has no persistent store coordinator to read persistent history from")
            }
            return try coordinator._executeHistoryRequest(history)
        default:
            throw coreDataError(
                NSPersistentStoreUnsupportedRequestTypeError,
                "execute(_:) runs batch update, delete and insert requests, persistent history requests and "
                    + "asynchronous fetches; "
                    + "\(type(of: request)) is none of them (use fetch(_:) for fetch requests and save() to save)",
                userInfo: ["request": request])
        }
    }

    private func _executeBatchUpdate(_ request: NSBatchUpdateRequest) throws -> NSBatchUpdateResult {
        let entity = _resolveEntity(
            named: request._entityName, entity: request._entity, request: "NSBatchUpdateRequest")
        request._entity = entity
        var update = try StoreBatchUpdate(request, entity: entity)
        update.author = _batchTransactionAuthor
        let outcome = try _executeBatch(entity: entity, affectedStores: request.affectedStores, inserting: false) {
            store, backend in
            if let backend { return try backend.executeBatchUpdate(update) }
            return try NSManagedObjectContext._emulate(update, in: store)
        }
        switch request.resultType {
        case .statusOnlyResultType:
            return NSBatchUpdateResult(result: NSNumber(value: true), resultType: .statusOnlyResultType)
        case .updatedObjectsCountResultType:
            return NSBatchUpdateResult(
                result: NSNumber(value: outcome.count), resultType: .updatedObjectsCountResultType)
        case .updatedObjectIDsResultType:
            return NSBatchUpdateResult(result: outcome.objectIDs, resultType: .updatedObjectIDsResultType)
        }
    }

    private func _executeBatchDelete(_ request: NSBatchDeleteRequest) throws -> NSBatchDeleteResult {
        let wantsIDs = request.resultType == .resultTypeObjectIDs
        let fetch = request._fetchRequest.copy() as! NSFetchRequest<NSFetchRequestResult>
        var objectIDs: [NSManagedObjectID]?
        if let ids = request._objectIDs {
            guard let first = ids.first else {
                return Self._deleteResult(StoreBatchOutcome(), resultType: request.resultType)
            }
            for id in ids {
                guard id._entity._name == first._entity._name else {
                    throw coreDataError(
                        NSPersistentStoreOperationError,
                        """
                        The object IDs of an NSBatchDeleteRequest must all be of one entity; they mix \
                        '\(first._entity._name ?? "")' and '\(id._entity._name ?? "")'
                        """,
                        userInfo: [NSAffectedObjectsErrorKey: [first, id]])
                }
                guard !id.isTemporaryID else {
                    throw coreDataError(
                        NSPersistentStoreOperationError,
                        "An NSBatchDeleteRequest cannot delete \(id), which is temporary: the object was never saved",
                        userInfo: [NSAffectedObjectsErrorKey: [id]])
                }
            }
            objectIDs = ids
        }
        let entity = _resolveEntity(fetch)
        fetch.entity = entity
        if let predicate = fetch.predicate, objectIDs == nil {
            try checkKeys(of: predicate, entity: entity)
        }
        let outcome = try _executeBatch(entity: entity, affectedStores: request.affectedStores, inserting: false) {
            store, backend in
            let delete = StoreBatchDelete(
                request: fetch, objectIDs: objectIDs?.filter { $0._isInStore(store) }, wantsObjectIDs: wantsIDs,
                author: _batchTransactionAuthor)
            if let backend { return try backend.executeBatchDelete(delete) }
            return try NSManagedObjectContext._emulate(delete, in: store)
        }
        return Self._deleteResult(outcome, resultType: request.resultType)
    }

    private static func _deleteResult(_ outcome: StoreBatchOutcome, resultType: NSBatchDeleteRequestResultType)
        -> NSBatchDeleteResult
    {
        switch resultType {
        case .resultTypeStatusOnly: return NSBatchDeleteResult(result: NSNumber(value: true), resultType: resultType)
        case .resultTypeCount:
            return NSBatchDeleteResult(result: NSNumber(value: outcome.count), resultType: resultType)
        case .resultTypeObjectIDs: return NSBatchDeleteResult(result: outcome.objectIDs, resultType: resultType)
        }
    }

    private func _executeBatchInsert(_ request: NSBatchInsertRequest) throws -> NSBatchInsertResult {
        let entity = _resolveEntity(
            named: request._entityName, entity: request._entity, request: "NSBatchInsertRequest")
        request._entity = entity
        precondition(
            !entity._isAbstract,
            "An NSBatchInsertRequest cannot insert objects of abstract entity '\(entity._name ?? "")'; use a subentity")
        let layout = entity._caches
        // The objects come one at a time, as the store asks for them: a handler may produce more than fit in memory.
        var next: () throws -> StoredValues?
        if let handler = request.dictionaryHandler {
            next = {
                let dictionary = NSMutableDictionary()
                if handler(dictionary) { return nil }
                return try StoreBatchInsert.values(
                    of: dictionary.lazy.map { (key: "\($0.key)", value: $0.value) }, entity: entity, layout: layout)
            }
        } else if let handler = request.managedObjectHandler {
            let objectClass = ManagedObjectClassRegistry.objectClass(for: entity)
            next = {
                let object = objectClass.init(entity: entity, insertInto: nil)
                if handler(object) { return nil }
                return try StoreBatchInsert.values(of: object, entity: entity, layout: layout)
            }
        } else {
            var dictionaries = (request.objectsToInsert ?? []).makeIterator()
            next = {
                guard let dictionary = dictionaries.next() else { return nil }
                return try StoreBatchInsert.values(
                    of: dictionary.lazy.map { (key: $0.key, value: $0.value) }, entity: entity, layout: layout)
            }
        }
        let insert = StoreBatchInsert(
            entity: entity, next: { try next() }, wantsObjectIDs: request.resultType == .objectIDs,
            author: _batchTransactionAuthor)
        let outcome = try _executeBatch(entity: entity, affectedStores: request.affectedStores, inserting: true) {
            store, backend in
            if let backend { return try backend.executeBatchInsert(insert) }
            return try NSManagedObjectContext._emulate(insert, in: store)
        }
        switch request.resultType {
        case .statusOnly: return NSBatchInsertResult(result: NSNumber(value: true), resultType: .statusOnly)
        case .count: return NSBatchInsertResult(result: NSNumber(value: outcome.count), resultType: .count)
        case .objectIDs: return NSBatchInsertResult(result: outcome.objectIDs, resultType: .objectIDs)
        }
    }

    /// The entity a request names, in the context's model.
    func _resolveEntity(named name: String, entity: NSEntityDescription?, request: String) -> NSEntityDescription {
        let model = _model
        if let entity {
            if let own = model.entitiesByName[entity._name ?? ""], own !== entity, entity._model !== model {
                return own
            }
            return entity
        }
        guard let found = model.entitiesByName[name] else {
            preconditionFailure("\(request): could not locate an entity named '\(name)' in the context's model")
        }
        return found
    }

    /// Runs a batch request in each store that holds `entity` (one writable store for an insertion), natively where
    /// the store executes batch requests itself (`backend` non-nil) and through a private context otherwise — with
    /// the store to itself, so that no save of another context interleaves.
    private func _executeBatch(
        entity: NSEntityDescription, affectedStores: [NSPersistentStore]?, inserting: Bool,
        _ body: (NSPersistentStore, PersistentStoreBatchExecuting?) throws -> StoreBatchOutcome
    ) throws -> StoreBatchOutcome {
        guard let coordinator = persistentStoreCoordinator else {
            throw coreDataError(
                NSPersistentStoreOperationError,
                "The context \(_debugName) has no persistent store coordinator to execute the batch request with")
        }
        var stores = coordinator._withLock { coordinator._stores(for: entity) }
        if let affectedStores {
            stores = stores.filter { store in affectedStores.contains { $0 === store } }
        }
        if inserting {
            guard let store = stores.first(where: { !$0.isReadOnly }) ?? stores.first else {
                throw coreDataError(
                    NSPersistentStoreSaveError,
                    """
                    No persistent store holds entity '\(entity._name ?? "")': add a store whose configuration \
                    includes it before inserting
                    """)
            }
            stores = [store]
        }
        var outcome = StoreBatchOutcome()
        for store in stores {
            let backend = try coordinator._backend(of: store, for: self)
            try store._serialized { outcome.add(try body(store, backend as? PersistentStoreBatchExecuting)) }
        }
        return outcome
    }
}
