/// Batch requests for stores that do not execute them themselves (the in-memory and atomic stores), and for the
/// requests a store cannot express in its SQL (`package` for the PostgreSQL store, which calls these then): a private
/// context fetches the objects, changes, deletes or inserts them, and saves, with what sets a batch request apart
/// from a save — no validation beyond deny rules, no notifications, no merging into other contexts, and plain
/// `NSManagedObject`s, so that no subclass code (`awakeFromInsert`, `willSave`…) runs where the SQLite store would
/// run none. The results are those of the SQLite store's set-based statements.
extension NSManagedObjectContext {
    /// A context that executes one batch request in `store`'s coordinator, saving as `author` (so that a store
    /// that records persistent history records the request's author and context name, as for its own statements).
    static func _batchExecutor(for store: NSPersistentStore, author: StoreTransactionAuthor = StoreTransactionAuthor())
        throws -> NSManagedObjectContext
    {
        guard let coordinator = store._coordinator else {
            throw coreDataError(
                NSPersistentStoreOperationError, "The persistent store was removed from its coordinator")
        }
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context._isBatchExecutor = true
        context.persistentStoreCoordinator = coordinator
        context._transactionAuthor = author.author
        context._name = author.contextName
        return context
    }

    /// The objects a fetch of `entity` (and its subentities, if asked) that `predicate` matches gives, in `store`.
    func _batchObjects(
        _ request: NSFetchRequest<NSFetchRequestResult>, in store: NSPersistentStore
    ) throws -> [NSManagedObject] {
        let fetch = request.copy() as! NSFetchRequest<NSFetchRequestResult>
        fetch.affectedStores = [store]
        fetch.resultType = .managedObjectResultType
        fetch.returnsObjectsAsFaults = false
        fetch.includesPendingChanges = false
        return try self.fetch(fetch) as! [NSManagedObject]
    }

    package static func _emulate(_ update: StoreBatchUpdate, in store: NSPersistentStore) throws -> StoreBatchOutcome {
        let context = try _batchExecutor(for: store, author: update.author)
        let fetch = NSFetchRequest<NSFetchRequestResult>()
        fetch.entity = update.entity
        fetch.predicate = update.predicate
        fetch.includesSubentities = update.includesSubentities
        let objects = try context._batchObjects(fetch, in: store)
        for object in objects {
            // Every new value is computed from the values before the update, as SQL's SET clause does.
            var values: [(slot: Int, value: StoredValue)] = []
            for assignment in update.assignments {
                if case .constant(let constant) = assignment.value {
                    values.append((assignment.slot, constant))
                    continue
                }
                let result = assignment.expression.expressionValue(with: object, context: nil)
                let value = StoredValue.attributeValue(result, type: assignment.attribute._attributeType) ?? .null
                values.append((assignment.slot, value))
            }
            for (slot, value) in values {
                object.setValue(value.publicValue, forKey: object._layout.slots[slot].name)
            }
        }
        try context.save()
        return StoreBatchOutcome(count: objects.count, objectIDs: update.wantsObjectIDs ? objects.map(\.objectID) : [])
    }

    package static func _emulate(_ delete: StoreBatchDelete, in store: NSPersistentStore) throws -> StoreBatchOutcome {
        let context = try _batchExecutor(for: store, author: delete.author)
        let objects: [NSManagedObject]
        if let ids = delete.objectIDs {
            // IDs of objects that are gone already delete nothing.
            objects = ids.compactMap { try? context.existingObject(with: $0) }
        } else {
            objects = try context._batchObjects(delete.request, in: store)
        }
        for object in objects {
            context.delete(object)
        }
        // Applies the delete rules: cascades delete more objects, nullified relationships let go.
        context.processPendingChanges()
        let deleted = context._deleted.sorted { NSAtomicStore._order($0._objectID, $1._objectID) }
        try context.save()
        return StoreBatchOutcome(count: deleted.count, objectIDs: delete.wantsObjectIDs ? deleted.map(\.objectID) : [])
    }

    package static func _emulate(_ insert: StoreBatchInsert, in store: NSPersistentStore) throws -> StoreBatchOutcome {
        let context = try _batchExecutor(for: store, author: insert.author)
        var objects: [NSManagedObject] = []
        while let values = try insert.next() {
            let object = NSManagedObject(entity: insert.entity, insertInto: context)
            object._values = values
            objects.append(object)
        }
        try context.save()
        return StoreBatchOutcome(count: objects.count, objectIDs: insert.wantsObjectIDs ? objects.map(\.objectID) : [])
    }
}

extension NSManagedObjectContext {
    /// Dictionary results of a store that does not compute them itself: from its objects as saved.
    package static func _emulate(_ fetch: StoreDictionaryFetch, in store: NSPersistentStore) throws -> [NSDictionary] {
        let context = try _batchExecutor(for: store)
        let request = NSFetchRequest<NSFetchRequestResult>()
        request.entity = fetch.entity
        request.predicate = fetch.request.predicate
        request.includesSubentities = fetch.request.includesSubentities
        if fetch.groupBy.isEmpty, !fetch.columns.contains(where: \.isAggregate) {
            request.sortDescriptors = fetch.request.sortDescriptors
        }
        return fetch.rows(of: try context._batchObjects(request, in: store))
    }
}
