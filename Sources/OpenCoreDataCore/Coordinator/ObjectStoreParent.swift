/// What a context needs from the layer below it — the coordinator for a root context, the parent context for a
/// child: DESIGN.md's "a parent context looks like a store to its children".
protocol ObjectStoreParent: AnyObject {
    /// The model of the objects.
    var _model: NSManagedObjectModel { get }
    /// Executes a fetch whose entity is resolved.
    func _fetchRows(_ request: NSFetchRequest<NSFetchRequestResult>, for context: NSManagedObjectContext) throws
        -> StoreFetchResult
    /// The values of one object; `nil` if it does not exist (any more).
    func _row(for objectID: NSManagedObjectID, for context: NSManagedObjectContext) throws -> StoreRow?
    /// The destinations of a to-many relationship of one object.
    func _destinationIDs(
        of relationship: NSRelationshipDescription, from objectID: NSManagedObjectID,
        for context: NSManagedObjectContext
    ) throws -> [NSManagedObjectID]
    /// The destinations of a to-many relationship of one object with their values where they are at hand (rows
    /// with empty `values` otherwise), so that the objects need not fetch them one by one when first touched.
    func _destinationRows(
        of relationship: NSRelationshipDescription, from objectID: NSManagedObjectID,
        for context: NSManagedObjectContext
    ) throws -> [StoreRow]
    /// Loads the destinations of `relationship` for many objects at once, so that the faults of the objects'
    /// relationships fire without a query each (as deleting many objects with delete rules needs). Optional: a
    /// parent that cannot do better than one object at a time does nothing.
    func _prefetchDestinations(
        of relationship: NSRelationshipDescription, from objectIDs: [NSManagedObjectID],
        for context: NSManagedObjectContext
    ) throws
    /// Permanent IDs for objects about to be saved.
    func _permanentIDs(for objects: [NSManagedObject], for context: NSManagedObjectContext) throws
        -> [NSManagedObjectID]
    /// Commits a context's changes.
    func _commit(_ changes: StoreSaveChanges, from context: NSManagedObjectContext) throws -> StoreSaveResult
}
