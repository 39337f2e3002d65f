/// A store whose row cache can go stale: its file changes through other connections (another coordinator, another
/// process). Merging such changes into a context forgets the rows first, so that refreshed objects read the new values.
package protocol PersistentStoreRowInvalidating: AnyObject {
    /// Forgets the cached rows of `objectIDs` (those of this store), whoever still holds their values.
    func invalidateRows(of objectIDs: [NSManagedObjectID])
}

extension NSPersistentStoreCoordinator {
    /// Forgets the cached rows of `objectIDs` in every store that caches rows.
    func _invalidateRows(of objectIDs: [NSManagedObjectID]) {
        guard !objectIDs.isEmpty else { return }
        _withAllStores {
            for store in _stores {
                (store as? PersistentStoreRowInvalidating)?.invalidateRows(of: objectIDs)
            }
        }
    }
}
