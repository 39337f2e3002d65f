/// One object's persistent values as a store hands them out: a row.
///
/// `values` has one entry per slot of the entity's layout (`EntityCache.slots`): attributes as stored values,
/// to-one relationships as `.objectID` or `.null`, to-many relationships as `.toManyFault` (their destinations
/// are asked for separately), non-persistent slots `.null`.
package struct StoreRow {
    package var objectID: NSManagedObjectID
    package var values: StoredValues
    /// The row's version (Core Data's `Z_OPT`): it grows by one with every saved change.
    package var version: Int64

    package init(objectID: NSManagedObjectID, values: StoredValues, version: Int64) {
        self.objectID = objectID
        self.values = values
        self.version = version
    }
}

/// What a store answers to a fetch.
package enum StoreFetchResult {
    /// The matching rows, already filtered, sorted and limited as the request asks.
    case rows([StoreRow])
    /// Candidate rows (every object of the entity, or a superset of the matches): the caller applies the
    /// predicate, sort order, offset and limit in memory.
    case candidates([StoreRow])
    /// The number of matching objects.
    case count(Int)
    /// The matching objects, already registered in the asking context (as an incremental store returns them),
    /// filtered, sorted and limited as the request asks.
    case objects([NSManagedObject])
}

/// One object in a save: its values as they are to be stored.
package struct StoreSaveObject {
    /// The object itself, for stores that read values through key-value coding (atomic stores).
    package let object: NSManagedObject
    package let objectID: NSManagedObjectID
    /// The values in the store's representation: to-one relationships as `.objectID`/`.null`, to-many as
    /// `.toManyFault`. (Taken by the saving context after the commit, as the objects' committed values.)
    package var values: StoredValues
    /// For updates: the slots that changed.
    package let changedSlots: SlotSet
    /// The destinations of the to-many relationships that changed (all of them, for an insert), in order.
    package let toMany: [Int: [NSManagedObjectID]]
    /// For updates and deletes: the version the saving context last saw; the save fails with a merge conflict
    /// if the store's version differs.
    package let expectedVersion: Int64
    /// Skip the version check (the `NSOverwriteMergePolicy`).
    package let forced: Bool
}

/// The changes of one save, for one store.
package struct StoreSaveChanges {
    package var inserted: [StoreSaveObject] = []
    package var updated: [StoreSaveObject] = []
    package var deleted: [StoreSaveObject] = []
    /// Who saves, for stores that record persistent history.
    package var author = StoreTransactionAuthor()
    /// Applies the saving context's merge policy to conflicts the store found and returns the changes to write
    /// instead (or throws the policy's error). A store that can keep other writers out meanwhile calls it inside its
    /// write transaction (the SQLite store, holding the file's write lock), so that what it writes next cannot
    /// conflict again: resolving outside the lock let another writer slip in every time, and a trump policy gave up.
    /// `nil` (a child context's save, or changes spread over several stores): the store throws `StoreConflicts`.
    package var resolveConflicts: ((StoreConflicts) throws -> StoreSaveChanges)?

    package var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
}

/// A row whose version in the store differs from the version the saving context expected.
package struct StoreConflict: @unchecked Sendable {
    // @unchecked: it carries an object ID (immutable) and a row (values copied on write) from the store to the saving
    // context, on the thread of the save.
    package let objectID: NSManagedObjectID
    /// The store's current row; `nil` if the object was deleted from the store.
    package let current: StoreRow?
    package let expectedVersion: Int64

    package init(objectID: NSManagedObjectID, current: StoreRow?, expectedVersion: Int64) {
        self.objectID = objectID
        self.current = current
        self.expectedVersion = expectedVersion
    }
}

/// The outcome of a save: the new versions of the rows it wrote, where they are not the ones a store gives by rule.
/// An inserted row it does not name has version 1, an updated row it does not name the version the save expected
/// plus one: a store names only the others (a forced update's, or all, if it keeps versions its own way), so that
/// saving many objects fills and reads no table of them.
package struct StoreSaveResult {
    package var versions: ObjectIDDictionary<Int64> = [:]
    package init() {}

    /// The version of a row the save inserted.
    @inline(__always)
    package func version(ofInserted objectID: NSManagedObjectID) -> Int64 {
        versions.isEmpty ? 1 : versions[objectID] ?? 1
    }

    /// The version of a row the save updated, whose change expected the row at `expected`.
    @inline(__always)
    package func version(ofUpdated objectID: NSManagedObjectID, expected: Int64) -> Int64 {
        versions.isEmpty ? expected + 1 : versions[objectID] ?? expected + 1
    }
}

/// The interface between the coordinator and every store, shaped like `NSIncrementalStore`: fetch rows, load
/// one row, load one relationship, assign permanent IDs, save. No code above it knows SQL; no store knows
/// about contexts beyond the objects handed to it.
package protocol PersistentStoreBackend: AnyObject {
    /// Executes a fetch of `request` (whose `entity` is resolved).
    func fetchRows(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> StoreFetchResult
    /// The row of one object; `nil` if the store does not have it.
    func row(for objectID: NSManagedObjectID) throws -> StoreRow?
    /// The destinations of a to-many relationship of one object, in the relationship's order.
    func destinations(of relationship: NSRelationshipDescription, from objectID: NSManagedObjectID) throws
        -> [NSManagedObjectID]
    /// Permanent IDs for objects about to be saved to this store.
    func permanentIDs(for objects: [NSManagedObject]) throws -> [NSManagedObjectID]
    /// Writes the changes atomically, or throws and writes nothing. Version mismatches throw `StoreConflicts`.
    func save(_ changes: StoreSaveChanges) throws -> StoreSaveResult
}

/// A store that keeps snapshots of the rows it has read or written (the row cache) and fulfils faults from them
/// while they are fresh enough for the asking context (`stalenessInterval`: negative means forever, 0 never).
package protocol PersistentStoreRowCaching: PersistentStoreBackend {
    func row(for objectID: NSManagedObjectID, stalenessInterval: TimeInterval) throws -> StoreRow?
    /// Forgets the cached row of `objectID` if no object uses it any longer: the object went away, or its context
    /// did. As in Apple's row cache, a row stays while objects hold it, not after.
    func forgetUnusedRow(of objectID: NSManagedObjectID)
    /// `forgetUnusedRow(of:)` of `store`, which is of this type, called through the type: the coordinator calls it for
    /// every object that goes away, and calling through an existential of the store would retain the store, whose
    /// retains take the runtime's slow path (stores are weakly referenced).
    static func forgetUnusedRow(in store: NSPersistentStore, of objectID: NSManagedObjectID)
}

extension PersistentStoreRowCaching where Self: NSPersistentStore {
    package static func forgetUnusedRow(in store: NSPersistentStore, of objectID: NSManagedObjectID) {
        unsafeDowncast(store, to: Self.self).forgetUnusedRow(of: objectID)
    }
}

/// A store that hands out the rows of a to-many relationship's destinations along with their IDs (rows with empty
/// `values` where it has none at hand).
package protocol PersistentStoreToManyRows: PersistentStoreBackend {
    func destinationRows(of relationship: NSRelationshipDescription, from objectID: NSManagedObjectID) throws
        -> [StoreRow]
}

/// An `NSIncrementalStore` of OpenCoreData's own, final, whose `managedObjectContextDidRegisterObjects(with:)` and
/// `managedObjectContextDidUnregisterObjects(with:)` do nothing: contexts do not tell it of every object they register
/// and unregister (two calls, an array and the store's lock per object otherwise).
package protocol PersistentStoreIgnoringRegistration: NSIncrementalStore {}

/// A store that can load the destinations of one to-many relationship for many objects in one go, into the cache
/// that `destinations(of:from:)` then answers from.
package protocol PersistentStoreToManyPrefetching: PersistentStoreBackend {
    func prefetchDestinations(of relationship: NSRelationshipDescription, from objectIDs: [NSManagedObjectID]) throws
}

/// Thrown by `PersistentStoreBackend.save(_:)` when rows changed underneath the saving context.
package struct StoreConflicts: Error {
    package let conflicts: [StoreConflict]
    package init(_ conflicts: [StoreConflict]) { self.conflicts = conflicts }
}

/// A store that can answer some fetch requests while another call is in it, from what was last committed: the SQLite
/// store with a write-ahead log reads through a connection of its own while a save writes through the other.
package protocol PersistentStoreConcurrentFetching: PersistentStoreBackend {
    /// The answer to `request` read beside whatever other call is in the store, or `nil` if the request (or the
    /// store's state) needs the store to itself; the coordinator then waits its turn and calls `fetchRows(_:)`.
    func fetchRowsBesideOtherCalls(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> StoreFetchResult?
}
