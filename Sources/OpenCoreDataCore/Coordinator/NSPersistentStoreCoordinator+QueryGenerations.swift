/// Query generations at the coordinator: making a generation of its stores, and sending a pinned context's reads to
/// it.
extension NSPersistentStoreCoordinator {
    /// The backend that answers `context`'s reads of `store`: the store's part of the context's generation when the
    /// context is pinned and the store keeps generations, the store itself otherwise. Saves, and the reads a save
    /// makes (conflict checks, merge policies, uniqueness constraints), always see the latest commit: "query
    /// generations are for fetched data only; they are not used during saving."
    func _readBackend(of store: NSPersistentStore?, for context: NSManagedObjectContext) throws
        -> PersistentStoreBackend
    {
        if case .unpinned = context._queryGeneration {
            return try _backend(of: store, for: context)
        }
        if !context._isSaving, let store,
            let generation = try context._pinnedGeneration()?.stores[ObjectIdentifier(store)]
        {
            return generation
        }
        return try _backend(of: store, for: context)
    }

    /// A generation of every store now, for a context pinning itself at its read: the latest one made, if every
    /// store still reads the same state (nothing was committed since), so that contexts pinned at the same moment
    /// share it; `nil` if no store keeps generations.
    func _currentQueryGeneration() throws -> QueryGeneration? {
        var stores: [ObjectIdentifier: any PersistentStoreGeneration] = [:]
        for store in _withLock({ _stores }) {
            guard let generating = store as? PersistentStoreQueryGenerating,
                let generation = try store._serialized({ try generating.currentGeneration() })
            else { continue }
            stores[ObjectIdentifier(store)] = generation
        }
        guard !stores.isEmpty else { return nil }
        return _withLock {
            if let latest = _latestQueryGeneration, latest.readsTheSameState(as: stores) { return latest }
            let made = QueryGeneration(coordinator: self, stores: stores)
            _latestQueryGeneration = made
            return made
        }
    }
}
