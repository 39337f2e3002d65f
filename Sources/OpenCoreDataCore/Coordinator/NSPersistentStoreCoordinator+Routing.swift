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
            // The objects of each store, by position; a coordinator has few stores, so a short list. The store of
            // each entity is found once per entity rather than once per object; objects come mostly many of one
            // entity in a row. (Entities are compared by identity: holding the last one would retain and release
            // it for every object.)
            var groups: [(store: NSPersistentStore, indices: [Int])] = []
            var groupOfEntity: [ObjectKey: Int] = [:]
            var last: (entity: ObjectIdentifier, group: Int)?
            for index in objects.indices where objects[index]._objectID.isTemporaryID {
                let entityKey = ObjectIdentifier(objects[index]._entity)
                if let last, last.entity == entityKey {
                    groups[last.group].indices.append(index)
                    continue
                }
                let group: Int
                if let known = groupOfEntity[ObjectKey(entityKey)] {
                    group = known
                } else {
                    let entity = objects[index]._entity
                    let candidates = _stores(for: entity)
                    guard let store = candidates.first(where: { !$0.isReadOnly }) ?? candidates.first else {
                        throw coreDataError(
                            NSPersistentStoreSaveError,
                            """
                            No persistent store holds entity '\(entity._name ?? "")': add a store whose \
                            configuration includes it before saving
                            """,
                            userInfo: [NSAffectedObjectsErrorKey: [objects[index]]])
                    }
                    group = groups.firstIndex { $0.store === store } ?? groups.endIndex
                    if group == groups.endIndex { groups.append((store, [])) }
                    groupOfEntity[ObjectKey(entityKey)] = group
                }
                groups[group].indices.append(index)
                last = (entityKey, group)
            }
            for group in groups {
                let members = group.indices.count == objects.count ? objects : group.indices.map { objects[$0] }
                let ids = try _backend(of: group.store).permanentIDs(for: members)
                for (index, id) in zip(group.indices, ids) {
                    result[index] = id
                }
            }
            return result
        }
    }

    func _commit(_ changes: StoreSaveChanges, from context: NSManagedObjectContext) throws -> StoreSaveResult {
        try _withLock {
            let result = try _commitObjects(changes)
            // Stores whose metadata was set since they last saved write it now, with or without objects.
            for store in _stores where store._metadataNeedsSave {
                _ = try _backend(of: store).save(StoreSaveChanges())
                store._metadataNeedsSave = false
            }
            return result
        }
    }

    private func _commitObjects(_ changes: StoreSaveChanges) throws -> StoreSaveResult {
        do {
            func noStore(_ objectID: NSManagedObjectID) -> Error {
                coreDataError(
                    NSPersistentStoreSaveError, "The object \(objectID) has no persistent store to be saved to")
            }
            // Usually every object of a save lives in one store: then the changes go to it as they are.
            let all = [changes.inserted, changes.updated, changes.deleted].joined()
            if let first = all.first {
                guard let store = first.objectID._store else { throw noStore(first.objectID) }
                if all.allSatisfy({ $0.objectID._isInStore(store) }) {
                    return try _backend(of: store).save(changes)
                }
            }
            var byStore: [ObjectKey: (store: NSPersistentStore, changes: StoreSaveChanges)] = [:]
            func group(_ objectID: NSManagedObjectID) throws -> ObjectKey {
                guard let store = objectID._store else { throw noStore(objectID) }
                let key = ObjectKey(ObjectIdentifier(store))
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
