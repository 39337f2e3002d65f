import Foundation
import Synchronization

/// The base class of stores that load and save objects one request at a time: a web service, another database, a
/// cache. It is how stores outside the framework plug into a coordinator, with public API only.
///
/// A subclass overrides:
/// - `loadMetadata()`: set `metadata` with at least `NSStoreTypeKey` and `NSStoreUUIDKey` (keep the UUID: it is
///   the host of the store's object URIs);
/// - `execute(_:with:)`: answer fetch requests (objects, IDs, dictionaries or a count, per the request's
///   `resultType`, filtered, sorted and limited as the request asks) and save requests (`NSSaveChangesRequest`);
/// - `newValuesForObject(with:with:)`: one object's values as a node; throw
///   `CocoaError(.managedObjectReferentialIntegrity)` when the store has no such object;
/// - `newValue(forRelationship:forObjectWith:with:)`: a relationship's destinations as object IDs;
/// - `obtainPermanentIDs(for:)`: IDs for objects about to be saved, made with `newObjectID(for:referenceObject:)`.
///
/// Register the class for a type string, then add stores of that type:
///
/// ```swift
/// NSPersistentStoreCoordinator.registerStoreClass(DictionaryStore.self, type: .init(rawValue: "Dictionary"))
/// try coordinator.addPersistentStore(type: .init(rawValue: "Dictionary"), at: url)
/// ```
///
/// The coordinator checks what a store answers — node values against the model, IDs against the store and the
/// entity — and reports what does not fit as an error naming the store class and the method, in
/// `NSCocoaErrorDomain`; the saving or fetching context stays usable. It also does the optimistic locking: before a
/// save it compares the version of each changed object's node with the version the saving context read, and
/// reports differences as merge conflicts for the context's merge policy. Calls into one store are serialized, so
/// a store's methods need no locking of their own against each other.
open class NSIncrementalStore: NSPersistentStore, @unchecked Sendable {
    // @unchecked: a store's state is its subclass's; the coordinator calls a store's methods one at a time.

    /// Loads the store's metadata. Subclasses must override it and set `metadata`, with `NSStoreTypeKey` and
    /// `NSStoreUUIDKey`.
    open override func loadMetadata() throws {
        throw coreDataError(
            NSPersistentStoreOpenError,
            """
            \(Self._className) does not override loadMetadata(); an NSIncrementalStore subclass must set metadata \
            with NSStoreTypeKey and NSStoreUUIDKey there
            """)
    }

    /// Executes a fetch request (returning an array of objects registered in `context`, object IDs or dictionaries,
    /// or one `NSNumber` count, per `resultType`) or a save request (`NSSaveChangesRequest`, returning an empty
    /// array). Subclasses must override it.
    open func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext?) throws -> Any {
        throw coreDataError(
            NSPersistentStoreUnsupportedRequestTypeError,
            "\(Self._className) does not override execute(_:with:), so it cannot execute \(Swift.type(of: request))")
    }

    /// The values of the object `objectID` as a node. Subclasses must override it; throw
    /// `CocoaError(.managedObjectReferentialIntegrity)` when the store has no such object.
    open func newValuesForObject(with objectID: NSManagedObjectID, with context: NSManagedObjectContext) throws
        -> NSIncrementalStoreNode
    {
        throw coreDataError(
            NSPersistentStoreOperationError,
            "\(Self._className) does not override newValuesForObject(with:with:), so its objects cannot load")
    }

    /// The destinations of `relationship` of the object `objectID`: an `NSManagedObjectID` (or `NSNull`) for a
    /// to-one relationship, a collection of IDs (an array, set or ordered set; in order, for an ordered relationship)
    /// for a to-many one. Subclasses must override it.
    open func newValue(
        forRelationship relationship: NSRelationshipDescription, forObjectWith objectID: NSManagedObjectID,
        with context: NSManagedObjectContext?
    ) throws -> Any {
        throw coreDataError(
            NSPersistentStoreOperationError,
            """
            \(Self._className) does not override newValue(forRelationship:forObjectWith:with:), so relationship \
            '\(relationship.name)' cannot load
            """)
    }

    /// Permanent IDs for objects about to be saved (or passed to `obtainPermanentIDs(for:)` of a context), one per
    /// object in order, made with `newObjectID(for:referenceObject:)`. Subclasses must override it.
    open func obtainPermanentIDs(for array: [NSManagedObject]) throws -> [NSManagedObjectID] {
        throw coreDataError(
            NSPersistentStoreOperationError,
            "\(Self._className) does not override obtainPermanentIDs(for:), so new objects cannot be saved to it")
    }

    /// Tells the store that a context now uses the objects `objectIDs` (fetched, faulted in, or saved). Stores that
    /// cache values per object can count uses here.
    open func managedObjectContextDidRegisterObjects(with objectIDs: [NSManagedObjectID]) {}

    /// Tells the store that a context no longer uses the objects `objectIDs`.
    open func managedObjectContextDidUnregisterObjects(with objectIDs: [NSManagedObjectID]) {}

    /// A new unique identifier for a store created at `storeURL`, for `NSStoreUUIDKey`.
    open class func identifierForNewStore(at storeURL: URL) -> Any {
        UUID().uuidString
    }

    /// The ID of the object of `entity` that the store knows by `data`, a string or a number (the row key, say).
    /// IDs made from equal reference objects are equal.
    public func newObjectID(for entity: NSEntityDescription, referenceObject data: Any) -> NSManagedObjectID {
        NSManagedObjectID(entity: entity, store: self, reference: NSManagedObjectID.Reference(referenceObject: data))
    }

    /// The reference object an ID of this store was made from with `newObjectID(for:referenceObject:)`.
    public func referenceObject(for objectID: NSManagedObjectID) -> Any {
        objectID._reference.referenceObject
    }

    /// The store's type: the type recorded in its metadata, else the type string it was added as.
    open override var type: String {
        (metadata?[NSStoreTypeKey] as? String) ?? _addedType ?? ""
    }

    static var _className: String { String(describing: self) }

    // MARK: Registration notices

    /// Registration notices that arrived while another thread was in the store, in order: `true` for registered.
    private let _deferredNotices = LockedState<[(registered: Bool, ids: [NSManagedObjectID])]>([])

    /// Tells the store that a context registered (or no longer uses) `objectIDs` — at once if no other call is in
    /// the store, else with the next call into it. Never waits: objects are registered while a fetch's results are
    /// taken in, and go away in `deinit`, on any thread and at any time (inside a call into another store, say);
    /// waiting there for this store would let a slow call here hold up unrelated threads, or deadlock.
    func _tell(registered: Bool, _ objectIDs: [NSManagedObjectID]) {
        guard _storeLock.try() else {
            _deferredNotices.withLock { $0.append((registered, objectIDs)) }
            _hasDeferredNotices.store(true, ordering: .releasing)
            return
        }
        defer { _storeLock.unlock() }
        if _hasDeferredNotices.load(ordering: .acquiring) { _deliverDeferredNotices() }
        _deliver(registered: registered, objectIDs)
    }

    private func _deliver(registered: Bool, _ objectIDs: [NSManagedObjectID]) {
        if registered {
            managedObjectContextDidRegisterObjects(with: objectIDs)
        } else {
            managedObjectContextDidUnregisterObjects(with: objectIDs)
        }
    }

    override func _deliverDeferredNotices() {
        _hasDeferredNotices.store(false, ordering: .releasing)
        let deferred = _deferredNotices.withLock { notices in
            defer { notices = [] }
            return notices
        }
        for notice in deferred { _deliver(registered: notice.registered, notice.ids) }
    }

    /// Checks what `loadMetadata()` left: metadata with a store UUID, which names the store in its objects' URIs.
    func _checkLoadedMetadata() throws {
        guard let metadata = _metadata else {
            throw coreDataError(
                NSPersistentStoreOpenError,
                "\(Self._className).loadMetadata() set no metadata; set it with NSStoreTypeKey and NSStoreUUIDKey",
                userInfo: [NSAffectedStoresErrorKey: [self]])
        }
        guard let uuid = metadata[NSStoreUUIDKey] as? String, !uuid.isEmpty else {
            throw coreDataError(
                NSPersistentStoreOpenError,
                """
                \(Self._className).loadMetadata() set metadata without a store UUID; set NSStoreUUIDKey to a string \
                that stays the same across launches (identifierForNewStore(at:) makes one for a new store)
                """,
                userInfo: [NSAffectedStoresErrorKey: [self]])
        }
        _identifier = uuid
    }
}
