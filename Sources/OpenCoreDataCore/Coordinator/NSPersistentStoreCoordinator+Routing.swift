/// The coordinator as the layer under root contexts: each request goes to the stores that hold the entity.
extension NSPersistentStoreCoordinator: ObjectStoreParent {
    var _model: NSManagedObjectModel { _managedObjectModel }

    func _fetchRows(_ request: NSFetchRequest<NSFetchRequestResult>, for context: NSManagedObjectContext) throws
        -> StoreFetchResult
    {
        guard let entity = request.entity else { return .rows([]) }
        if request.affectedStores == nil, case .unpinned = context._queryGeneration,
            let route = _withLock({ _onlyStoreRoute }), entity._model === _managedObjectModel
        {
            return try _fetchRows(request, through: route)
        }
        var stores = _withLock { _stores(for: entity) }
        if let affected = request.affectedStores {
            stores = stores.filter { store in affected.contains { $0 === store } }
        }
        if stores.isEmpty { return .rows([]) }
        if stores.count == 1 {
            return try _fetchRows(request, from: stores[0], backend: try _readBackend(of: stores[0], for: context))
        }
        return try _fetchRows(request, fromEach: stores, for: context)
    }

    /// `backend`'s answer to `request`, with the store to itself or — where the store can read beside another call
    /// (a SQLite store with a write-ahead log, while a save writes) — without waiting for that call.
    private func _fetchRows(
        _ request: NSFetchRequest<NSFetchRequestResult>, from store: NSPersistentStore, backend: PersistentStoreBackend
    ) throws -> StoreFetchResult {
        try _fetchRows(
            request, from: store, backend: backend, concurrent: backend as? PersistentStoreConcurrentFetching)
    }

    /// `_fetchRows(_:from:backend:concurrent:)` with the parts of `route`, read from it where they are used: passed
    /// as arguments, each would be retained, and a store's retains take the slow path (its objects' IDs reference it
    /// weakly).
    private func _fetchRows(_ request: NSFetchRequest<NSFetchRequestResult>, through route: StoreRoute) throws
        -> StoreFetchResult
    {
        guard let concurrent = route.concurrent else {
            return try route.store._serialized { try route.backend.fetchRows(request) }
        }
        return try route.store._serialized(
            { try route.backend.fetchRows(request) }, orBeside: { try concurrent.fetchRowsBesideOtherCalls(request) })
    }

    private func _fetchRows(
        _ request: NSFetchRequest<NSFetchRequestResult>, from store: NSPersistentStore, backend: PersistentStoreBackend,
        concurrent: PersistentStoreConcurrentFetching?
    ) throws -> StoreFetchResult {
        guard let concurrent else {
            return try store._serialized { try backend.fetchRows(request) }
        }
        return try store._serialized(
            { try backend.fetchRows(request) }, orBeside: { try concurrent.fetchRowsBesideOtherCalls(request) })
    }

    /// A fetch over several stores: each is asked for its first `fetchOffset + fetchLimit` matches (the offset counts
    /// over all stores together), and the context sorts, offsets and limits them together. Counts add up when every
    /// store counts; a store that counts while another hands out candidates is asked once more, for its matches.
    private func _fetchRows(
        _ request: NSFetchRequest<NSFetchRequestResult>, fromEach stores: [NSPersistentStore],
        for context: NSManagedObjectContext
    ) throws -> StoreFetchResult {
        let perStore = request.copy() as! NSFetchRequest<NSFetchRequestResult>
        perStore.fetchOffset = 0
        perStore.fetchLimit = request.fetchLimit > 0 ? request.fetchLimit + request.fetchOffset : 0
        if request.resultType == .countResultType { perStore.fetchLimit = 0 }
        // Each store answers under its own serialization: a fetch across stores reads each as it is when asked.
        var answers: [(store: NSPersistentStore, backend: PersistentStoreBackend, result: StoreFetchResult)] = []
        for store in stores {
            let backend = try _readBackend(of: store, for: context)
            answers.append((store, backend, try _fetchRows(perStore, from: store, backend: backend)))
        }
        let counts = answers.compactMap { answer -> Int? in
            if case .count(let count) = answer.result { return count }
            return nil
        }
        if counts.count == answers.count {
            var total = max(0, counts.reduce(0, +) - request.fetchOffset)
            if request.fetchLimit > 0 { total = min(total, request.fetchLimit) }
            return .count(total)
        }
        var rows: [StoreRow] = []
        for answer in answers {
            switch answer.result {
            case .rows(let found), .candidates(let found):
                rows += found
            case .objects(let found):
                rows += found.map { StoreRow(objectID: $0._objectID, values: [], version: 0) }
            case .count:
                let objects = perStore.copy() as! NSFetchRequest<NSFetchRequestResult>
                objects.resultType = .managedObjectResultType
                switch try _fetchRows(objects, from: answer.store, backend: answer.backend) {
                case .rows(let found), .candidates(let found): rows += found
                case .objects(let found): rows += found.map { StoreRow(objectID: $0._objectID, values: [], version: 0) }
                case .count: break
                }
            }
        }
        return .candidates(rows)
    }

    func _row(for objectID: NSManagedObjectID, for context: NSManagedObjectContext) throws -> StoreRow? {
        guard !objectID.isTemporaryID else { return nil }
        let store = objectID._store
        let backend = try _readBackend(of: store, for: context)
        return try store!._serialized {
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
        guard !objectID.isTemporaryID else { return [] }
        let store = objectID._store
        let backend = try _readBackend(of: store, for: context)
        return try store!._serialized { try backend.destinations(of: relationship, from: objectID) }
    }

    func _destinationRows(
        of relationship: NSRelationshipDescription, from objectID: NSManagedObjectID,
        for context: NSManagedObjectContext
    ) throws -> [StoreRow] {
        guard !objectID.isTemporaryID else { return [] }
        let store = objectID._store
        let backend = try _readBackend(of: store, for: context)
        return try store!._serialized {
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
        var byStore: [ObjectIdentifier: (store: NSPersistentStore, ids: [NSManagedObjectID])] = [:]
        for objectID in objectIDs where !objectID.isTemporaryID {
            guard let store = objectID._store else { continue }
            byStore[ObjectIdentifier(store), default: (store, [])].ids.append(objectID)
        }
        for (_, group) in byStore {
            let backend = try? _readBackend(of: group.store, for: context)
            guard let prefetching = backend as? PersistentStoreToManyPrefetching else { continue }
            try group.store._serialized { try prefetching.prefetchDestinations(of: relationship, from: group.ids) }
        }
    }

    func _permanentIDs(for objects: [NSManagedObject], for context: NSManagedObjectContext) throws
        -> [NSManagedObjectID]
    {
        do {
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
                    let candidates = _withLock { _stores(for: entity) }
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
                let backend = try _backend(of: group.store, for: context)
                let ids = try group.store._serialized { try backend.permanentIDs(for: members) }
                for (index, id) in zip(group.indices, ids) {
                    result[index] = id
                }
            }
            return result
        }
    }

    func _commit(_ changes: StoreSaveChanges, from context: NSManagedObjectContext) throws -> StoreSaveResult {
        let result = try _commitObjects(changes, from: context)
        // Stores whose metadata was set since they last saved write it now, with or without objects.
        // Only those stores are waited for, so that a save holds up no store it does not write to.
        for store in _withLock({ _stores }) where store._metadataNeedsSave.load(ordering: .acquiring) {
            let backend = try _backend(of: store, for: context)
            try store._serialized {
                guard store._metadataNeedsSave.load(ordering: .acquiring) else { return }
                _ = try backend.save(StoreSaveChanges())
                store._metadataNeedsSave.store(false, ordering: .releasing)
            }
        }
        return result
    }

    private func _commitObjects(_ changes: StoreSaveChanges, from context: NSManagedObjectContext) throws
        -> StoreSaveResult
    {
        do {
            func noStore(_ objectID: NSManagedObjectID) -> Error {
                coreDataError(
                    NSPersistentStoreSaveError, "The object \(objectID) has no persistent store to be saved to")
            }
            // Usually every object of a save lives in one store: then the changes go to it as they are.
            let lists = [changes.inserted, changes.updated, changes.deleted]
            if let first = lists.first(where: { !$0.isEmpty })?[0].objectID {
                guard let store = first._store else { throw noStore(first) }
                // (Read in place: iterating the changes copied each one, retaining its references.)
                let inOneStore = lists.allSatisfy { list in
                    list.withUnsafeBufferPointer { list in
                        list.indices.allSatisfy { list[$0].objectID._isInStore(store) }
                    }
                }
                if inOneStore {
                    // A store that does not resolve conflicts itself has no writer but this coordinator: resolving
                    // while the store is held, before anyone else saves, settles them (bounded all the same).
                    let backend = try _backend(of: store, for: context)
                    return try store._serialized {
                        var changes = changes
                        var attempt = 0
                        while true {
                            attempt += 1
                            do {
                                return try backend.save(changes)
                            } catch let conflicts as StoreConflicts {
                                guard let resolve = changes.resolveConflicts, attempt < 8 else { throw conflicts }
                                changes = try resolve(conflicts)
                                changes.resolveConflicts = resolve
                            }
                        }
                    }
                }
            }
            var byStore: [ObjectKey: (store: NSPersistentStore, changes: StoreSaveChanges)] = [:]
            func group(_ objectID: NSManagedObjectID) throws -> ObjectKey {
                guard let store = objectID._store else { throw noStore(objectID) }
                let key = ObjectKey(ObjectIdentifier(store))
                if byStore[key] == nil {
                    var part = StoreSaveChanges()
                    part.author = changes.author
                    byStore[key] = (store, part)
                }
                return key
            }
            for change in changes.inserted { byStore[try group(change.objectID)]!.changes.inserted.append(change) }
            for change in changes.updated { byStore[try group(change.objectID)]!.changes.updated.append(change) }
            for change in changes.deleted { byStore[try group(change.objectID)]!.changes.deleted.append(change) }
            // Every store of the save is held for all of it, so that no other save lands in one of them between two;
            // they are taken in one order everywhere (`_serialized(_:stores:)`), so that two such saves cannot wait
            // for each other.
            let entries = byStore.values.sorted { $0.store._url?.path ?? "" < $1.store._url?.path ?? "" }
            return try NSPersistentStore._serialized(entries.map(\.store)) {
                var result = StoreSaveResult()
                for entry in entries {
                    let stored = try _backend(of: entry.store, for: context).save(entry.changes)
                    if result.versions.isEmpty {
                        result = stored
                    } else {
                        result.versions.merge(stored.versions) { $1 }
                    }
                }
                return result
            }
        }
    }
}
