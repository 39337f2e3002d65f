/// What an `NSBatchUpdateRequest` returns in its result.
public enum NSBatchUpdateRequestResultType: UInt, Sendable {
    /// Only whether the update succeeded (`true`).
    case statusOnlyResultType = 0
    /// The IDs of the updated objects.
    case updatedObjectIDsResultType = 1
    /// The number of updated objects.
    case updatedObjectsCountResultType = 2
}

/// Changes attributes of every object of an entity that matches a predicate, in the store, without loading the
/// objects: on the SQLite store one `UPDATE` statement in one transaction, which also raises each row's version
/// (`Z_OPT`) so that contexts holding an older copy get a merge conflict if they save it.
///
/// The contexts' objects are not changed: objects already registered keep their old values until they are
/// refreshed, or until the updated IDs are merged with
/// `NSManagedObjectContext.mergeChanges(fromRemoteContextSave:into:)`. Validation rules are not applied.
///
/// ```swift
/// let request = NSBatchUpdateRequest(entityName: "Employee")
/// request.predicate = NSPredicate(format: "company.name == %@", "Acme")
/// request.propertiesToUpdate = ["salary": NSExpression(format: "salary * 1.1"), "reviewed": true]
/// request.resultType = .updatedObjectIDsResultType
/// let result = try context.execute(request) as? NSBatchUpdateResult
/// let ids = result?.result as? [NSManagedObjectID] ?? []
/// NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSUpdatedObjectsKey: ids], into: [context])
/// ```
///
/// `propertiesToUpdate` maps attribute names (or `NSAttributeDescription`s) to new values: constants, or
/// `NSExpression`s made of constants, the object's own attributes, `now()` and the arithmetic functions `+`, `-`,
/// `*` and `/` (by a constant other than zero). Anything else, an unknown or relationship key, or a constant of the
/// wrong type throws, naming the key. Apple documents batch updates for the SQLite store only; OpenCoreData's
/// in-memory and atomic stores execute them too, with the same results.
open class NSBatchUpdateRequest: NSPersistentStoreRequest, @unchecked Sendable {
    // @unchecked: as NSPersistentStoreRequest: configured, then executed; not changed while executing.
    var _entityName: String
    var _entity: NSEntityDescription?

    /// Which objects to update; all objects of the entity when `nil`.
    open var predicate: NSPredicate?
    /// Whether objects of the entity's subentities are updated too.
    open var includesSubentities = true
    /// What the result holds.
    open var resultType: NSBatchUpdateRequestResultType = .statusOnlyResultType
    /// The new values, by attribute name or `NSAttributeDescription`: constants or `NSExpression`s.
    open var propertiesToUpdate: [AnyHashable: Any]?

    /// A request that updates objects of the entity named `entityName` (resolved against the context's model when
    /// it is executed).
    public required init(entityName: String) {
        _entityName = entityName
        super.init()
    }

    /// A request that updates objects of `entity`.
    public init(entity: NSEntityDescription) {
        _entityName = entity._name ?? ""
        _entity = entity
        super.init()
    }

    /// A request that updates objects of the entity named `entityName`.
    open class func batchUpdateRequest(withEntityName entityName: String) -> Self {
        self.init(entityName: entityName)
    }

    /// The name of the entity whose objects are updated.
    open var entityName: String { _entityName }

    /// The entity whose objects are updated.
    ///
    /// - Precondition: the request was made with an entity, or has been executed (which resolves its name).
    open var entity: NSEntityDescription {
        guard let entity = _entity else {
            preconditionFailure(
                """
                The NSBatchUpdateRequest for '\(_entityName)' was made with an entity name; its entity is known once \
                it has been executed. Use entityName, or make the request with init(entity:)
                """)
        }
        return entity
    }

    open override var requestType: NSPersistentStoreRequestType { .batchUpdateRequestType }

    open override func copy(with zone: NSZone? = nil) -> Any {
        let copy = Self(entityName: _entityName)
        copy._entity = _entity
        copy.predicate = predicate
        copy.includesSubentities = includesSubentities
        copy.resultType = resultType
        copy.propertiesToUpdate = propertiesToUpdate
        copy.affectedStores = affectedStores
        return copy
    }

    open override var description: String {
        "<NSBatchUpdateRequest: \(Unmanaged.passUnretained(self).toOpaque())> (entity: \(_entityName); predicate: "
            + "(\(predicate?.predicateFormat ?? "(null)")); resultType: \(resultType.rawValue))"
    }
}
