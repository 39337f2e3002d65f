/// Choosing the store a new object is saved to, when several stores of the coordinator hold its entity.
extension NSManagedObjectContext {
    /// Makes `object` (a newly inserted managed object) be saved to `store` rather than to the first store that
    /// holds its entity. The object gets a permanent ID of that store now.
    ///
    /// ```swift
    /// let note = NSEntityDescription.insertNewObject(forEntityName: "Note", into: context)
    /// context.assign(note, to: archiveStore)
    /// ```
    public func assign(_ object: Any, to store: NSPersistentStore) {
        guard let object = object as? NSManagedObject else { return }
        try? _assign([object], to: store)
    }

    /// Gives new objects permanent IDs of `store`, all at once.
    func _assign(_ objects: [NSManagedObject], to store: NSPersistentStore) throws {
        _assertOnQueue()
        let temporary = objects.filter { $0._objectID.isTemporaryID && $0.managedObjectContext === self }
        guard !temporary.isEmpty else { return }
        guard let coordinator = persistentStoreCoordinator, store.persistentStoreCoordinator === coordinator,
            let backend = try? coordinator._backend(of: store, for: self)
        else {
            throw coreDataError(
                NSPersistentStoreOperationError,
                "Cannot assign objects to the store \(store): it is not a store of the context's coordinator")
        }
        let ids = try store._serialized { try backend.permanentIDs(for: temporary) }
        for (object, id) in zip(temporary, ids) { _changeID(of: object, to: id) }
    }
}
