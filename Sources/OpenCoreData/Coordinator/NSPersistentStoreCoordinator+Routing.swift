/// The coordinator as the layer under root contexts: each request goes to the stores that hold the entity.
extension NSPersistentStoreCoordinator: ObjectStoreParent {
    var _model: NSManagedObjectModel { _managedObjectModel }

    func _fetchRows(_ request: NSFetchRequest<NSFetchRequestResult>, for context: NSManagedObjectContext) throws
        -> StoreFetchResult
    {
        try _withLock {
            guard let entity = request.entity else { return .rows([]) }
            var stores = _stores(for: entity)
            if let affected = request.affectedStores {
                stores = stores.filter { store in affected.contains { $0 === store } }
            }
            if stores.count == 1 {
                return try _backend(of: stores[0]).fetchRows(request)
            }
            // Several stores: gather candidates and let the context filter, sort and limit them together.
            var rows: [StoreRow] = []
            for store in stores {
                switch try _backend(of: store).fetchRows(request) {
                case .rows(let found), .candidates(let found): rows += found
                case .count:
                    let unlimited = request.copy() as! NSFetchRequest<NSFetchRequestResult>
                    unlimited.resultType = .managedObjectResultType
                    if case .rows(let found) = try _backend(of: store).fetchRows(unlimited) { rows += found }
                    if case .candidates(let found) = try _backend(of: store).fetchRows(unlimited) { rows += found }
                }
            }
            return .candidates(rows)
        }
    }

    func _row(for objectID: NSManagedObjectID, for context: NSManagedObjectContext) throws -> StoreRow? {
        try _withLock {
            guard !objectID.isTemporaryID else { return nil }
            let backend = try _backend(of: objectID._store)
            if let caching = backend as? PersistentStoreRowCaching {
                return try caching.row(for: objectID, stalenessInterval: context.stalenessInterval)
            }
            return try backend.row(for: objectID)
        }
    }

    func _destinationIDs(
        of relationship: NSRelationshipDescription, from objectID: NSManagedObjectID,
        for context: NSManagedObjectContext
    ) throws -> [NSManagedObjectID] {
        try _withLock {
            guard !objectID.isTemporaryID else { return [] }
            return try _backend(of: objectID._store).destinations(of: relationship, from: objectID)
        }
    }

    func _destinationRows(
        of relationship: NSRelationshipDescription, from objectID: NSManagedObjectID,
        for context: NSManagedObjectContext
    ) throws -> [StoreRow] {
        try _withLock {
            guard !objectID.isTemporaryID else { return [] }
            let backend = try _backend(of: objectID._store)
            if let rows = backend as? PersistentStoreToManyRows {
                return try rows.destinationRows(of: relationship, from: objectID)
            }
            return try backend.destinations(of: relationship, from: objectID).map {
                StoreRow(objectID: $0, values: [], version: 0)
            }
        }
    }

    func _prefetchDestinations(
        of relationship: NSRelationshipDescription, from objectIDs: [NSManagedObjectID],
        for context: NSManagedObjectContext
    ) throws {
        try _withLock {
            var byStore: [ObjectIdentifier: (store: NSPersistentStore?, ids: [NSManagedObjectID])] = [:]
            for objectID in objectIDs where !objectID.isTemporaryID {
                let key = objectID._store.map(ObjectIdentifier.init) ?? ObjectIdentifier(self)
                byStore[key, default: (objectID._store, [])].ids.append(objectID)
            }
            for (_, group) in byStore {
                guard let prefetching = (try? _backend(of: group.store)) as? PersistentStoreToManyPrefetching else {
                    continue
                }
                try prefetching.prefetchDestinations(of: relationship, from: group.ids)
            }
        }
    }

    func _permanentIDs(for objects: [NSManagedObject], for context: NSManagedObjectContext) throws
        -> [NSManagedObjectID]
    {
        try _withLock {
            var result = objects.map(\.objectID)
            var byStore: [ObjectIdentifier: (store: NSPersistentStore, indices: [Int])] = [:]
            // The store of each entity, found once per entity rather than once per object.
            var storeOfEntity: [ObjectIdentifier: NSPersistentStore] = [:]
            for (index, object) in objects.enumerated() where object._objectID.isTemporaryID {
                let entityKey = ObjectIdentifier(object._entity)
                if storeOfEntity[entityKey] == nil {
                    let candidates = _stores(for: object._entity)
                    storeOfEntity[entityKey] = candidates.first(where: { !$0.isReadOnly }) ?? candidates.first
                }
                guard let store = storeOfEntity[entityKey] else {
                    throw coreDataError(
                        NSPersistentStoreSaveError,
                        """
                        No persistent store holds entity '\(object._entity._name ?? "")': add a store whose \
                        configuration includes it before saving
                        """,
                        userInfo: [NSAffectedObjectsErrorKey: [object]])
                }
                byStore[ObjectIdentifier(store), default: (store, [])].indices.append(index)
            }
            for (_, group) in byStore {
                let ids = try _backend(of: group.store).permanentIDs(for: group.indices.map { objects[$0] })
                for (index, id) in zip(group.indices, ids) {
                    result[index] = id
                }
            }
            return result
        }
    }

    func _commit(_ changes: StoreSaveChanges, from context: NSManagedObjectContext) throws -> StoreSaveResult {
        try _withLock {
            var byStore: [ObjectIdentifier: (store: NSPersistentStore, changes: StoreSaveChanges)] = [:]
            func group(_ objectID: NSManagedObjectID) throws -> ObjectIdentifier {
                guard let store = objectID._store else {
                    throw coreDataError(
                        NSPersistentStoreSaveError, "The object \(objectID) has no persistent store to be saved to")
                }
                let key = ObjectIdentifier(store)
                if byStore[key] == nil { byStore[key] = (store, StoreSaveChanges()) }
                return key
            }
            for change in changes.inserted { byStore[try group(change.objectID)]!.changes.inserted.append(change) }
            for change in changes.updated { byStore[try group(change.objectID)]!.changes.updated.append(change) }
            for change in changes.deleted { byStore[try group(change.objectID)]!.changes.deleted.append(change) }
            var result = StoreSaveResult()
            for (_, entry) in byStore.sorted(by: { $0.value.store._url?.path ?? "" < $1.value.store._url?.path ?? "" })
            {
                let stored = try _backend(of: entry.store).save(entry.changes)
                result.versions.merge(stored.versions) { $1 }
            }
            return result
        }
    }
}
