/// Dictionary results (`.dictionaryResultType`): computed by each store that holds the entity from what it has
/// saved — in one SELECT by the SQLite store, from the stored objects through a private context by the others.
extension NSManagedObjectContext {
    func _fetchDictionaries(_ request: NSFetchRequest<NSFetchRequestResult>, entity: NSEntityDescription) throws
        -> [NSFetchRequestResult]
    {
        let fetch = StoreDictionaryFetch(request, entity: entity)
        guard let coordinator = persistentStoreCoordinator else {
            throw coreDataError(
                NSPersistentStoreOperationError,
                "The context \(_debugName) has no persistent store coordinator to fetch dictionaries from")
        }
        var stores = coordinator._withLock { coordinator._stores(for: entity) }
        if let affected = request.affectedStores {
            stores = stores.filter { store in affected.contains { $0 === store } }
        }
        var rows: [NSDictionary] = []
        for store in stores {
            // (Before the store is held: a context pinned to its next read takes its generation of every store.)
            let backend = try coordinator._readBackend(of: store, for: self)
            try store._serialized {
                if let fetching = backend as? PersistentStoreDictionaryFetching {
                    rows += try fetching.fetchDictionaries(fetch)
                } else {
                    rows += try NSManagedObjectContext._emulate(fetch, in: store)
                }
            }
        }
        return rows
    }
}
