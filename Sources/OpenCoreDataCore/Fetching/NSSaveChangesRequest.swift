/// The changes of one save of a context, as the coordinator hands them to an `NSIncrementalStore` in
/// `execute(_:with:)`: the objects inserted, updated and deleted, and those the context asked to check for conflicts
/// without changing them.
///
/// The objects are the saving context's; read their values with key-value coding. Inserted objects already have the
/// permanent IDs the store gave out in `obtainPermanentIDs(for:)`.
///
/// ```swift
/// for object in request.insertedObjects ?? [] {
///     rows[referenceObject(for: object.objectID) as! String] = object.dictionaryWithValues(forKeys: keys)
/// }
/// ```
open class NSSaveChangesRequest: NSPersistentStoreRequest, @unchecked Sendable {
    // @unchecked: its object sets are constants, made for one save and handed to the store inside that save.
    // (@unchecked: the sets are fixed when the request is made; the objects in them belong to the saving context and
    // are read on its queue, as every managed object is.)
    private let _inserted: Set<NSManagedObject>?
    private let _updated: Set<NSManagedObject>?
    private let _deleted: Set<NSManagedObject>?
    private let _locked: Set<NSManagedObject>?

    /// A save request for the given changes.
    public init(
        inserted insertedObjects: Set<NSManagedObject>?, updated updatedObjects: Set<NSManagedObject>?,
        deleted deletedObjects: Set<NSManagedObject>?, locked lockedObjects: Set<NSManagedObject>?
    ) {
        _inserted = insertedObjects
        _updated = updatedObjects
        _deleted = deletedObjects
        _locked = lockedObjects
        super.init()
    }

    /// The objects inserted into the saving context.
    open var insertedObjects: Set<NSManagedObject>? { _inserted }

    /// The objects changed in the saving context.
    open var updatedObjects: Set<NSManagedObject>? { _updated }

    /// The objects deleted in the saving context.
    open var deletedObjects: Set<NSManagedObject>? { _deleted }

    /// The objects whose versions are checked for conflicts although they did not change.
    open var lockedObjects: Set<NSManagedObject>? { _locked }

    open override var requestType: NSPersistentStoreRequestType { .saveRequestType }

    open override func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSSaveChangesRequest(inserted: _inserted, updated: _updated, deleted: _deleted, locked: _locked)
        copy.affectedStores = affectedStores
        return copy
    }
}
