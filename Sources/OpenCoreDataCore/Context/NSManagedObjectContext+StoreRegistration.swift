/// Telling incremental stores which of their objects contexts use (`managedObjectContextDidRegisterObjects(with:)`
/// and `managedObjectContextDidUnregisterObjects(with:)`), so that a store can keep values while they are in use.
extension NSManagedObjectContext {
    /// Tells the incremental stores among those of `objectIDs` that this context registered or unregistered them.
    /// IDs of other stores, and temporary ones, are passed over.
    func _tellStores(registered: Bool, _ objectIDs: [NSManagedObjectID]) {
        var byStore: [ObjectIdentifier: (store: NSIncrementalStore, ids: [NSManagedObjectID])] = [:]
        for id in objectIDs where id._storeReference?.tracksRegistration == true {
            guard let store = id._store as? NSIncrementalStore else { continue }
            byStore[ObjectIdentifier(store), default: (store, [])].ids.append(id)
        }
        for (_, group) in byStore { group.store._tell(registered: registered, group.ids) }
    }
}
