/// What an `NSBatchDeleteRequest` returns in its result.
public enum NSBatchDeleteRequestResultType: UInt, Sendable {
    /// Only whether the deletion succeeded (`true`).
    case resultTypeStatusOnly = 0
    /// The IDs of the deleted objects.
    case resultTypeObjectIDs = 1
    /// The number of deleted objects.
    case resultTypeCount = 2
}

/// Deletes the objects a fetch request matches (or the objects of a list of IDs) in the store, without loading
/// them: on the SQLite store a few set-based statements in one transaction.
///
/// Delete rules are applied in the store: the destinations of cascading relationships are deleted too (and so on,
/// along their own rules), nullified relationships lose the deleted objects (their rows' versions rise), join rows
/// go, and a deny rule whose relationship still holds objects that are not deleted along with the others fails the
/// whole request with `NSValidationRelationshipDeniedDeleteError`. No other validation is applied. The results
/// (`.resultTypeCount`, `.resultTypeObjectIDs`) count and list every deleted object, cascaded ones included.
///
/// The contexts' objects are not changed: merge the deleted IDs to remove them.
///
/// ```swift
/// let fetch = NSFetchRequest<NSFetchRequestResult>(entityName: "Employee")
/// fetch.predicate = NSPredicate(format: "terminationDate < %@", cutoff as NSDate)
/// let request = NSBatchDeleteRequest(fetchRequest: fetch)
/// request.resultType = .resultTypeObjectIDs
/// let result = try context.execute(request) as? NSBatchDeleteResult
/// let ids = result?.result as? [NSManagedObjectID] ?? []
/// NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSDeletedObjectsKey: ids], into: [context])
/// ```
///
/// Apple documents batch deletes for the SQLite store only; OpenCoreData's in-memory and atomic stores execute them
/// too, with the same results.
open class NSBatchDeleteRequest: NSPersistentStoreRequest, @unchecked Sendable {
    // @unchecked: as NSPersistentStoreRequest: configured, then executed; not changed while executing.
    let _fetchRequest: NSFetchRequest<NSFetchRequestResult>
    /// The IDs given to `init(objectIDs:)`, deleted as such rather than through the fetch request.
    let _objectIDs: [NSManagedObjectID]?

    /// What the result holds.
    open var resultType: NSBatchDeleteRequestResultType = .resultTypeStatusOnly

    /// A request that deletes the objects `fetch` matches (its entity, predicate, `includesSubentities`, and its
    /// sort order, offset and limit when it has any).
    public init(fetchRequest fetch: NSFetchRequest<NSFetchRequestResult>) {
        _fetchRequest = fetch.copy() as! NSFetchRequest<NSFetchRequestResult>
        _objectIDs = nil
        super.init()
    }

    /// A request that deletes the objects of `objectIDs`, which must all be of one entity (executing the request
    /// throws otherwise).
    public init(objectIDs: [NSManagedObjectID]) {
        let fetch = NSFetchRequest<NSFetchRequestResult>()
        if let first = objectIDs.first {
            fetch.entity = first._entity
        }
        fetch.predicate = NSComparisonPredicate(
            leftExpression: .expressionForEvaluatedObject(), rightExpression: NSExpression(forConstantValue: objectIDs),
            modifier: .direct, type: .in)
        _fetchRequest = fetch
        _objectIDs = objectIDs
        super.init()
    }

    /// The fetch request that selects the objects to delete; for a request made from object IDs, one whose
    /// predicate matches those IDs.
    open var fetchRequest: NSFetchRequest<NSFetchRequestResult> {
        _fetchRequest.copy() as! NSFetchRequest<NSFetchRequestResult>
    }

    open override var requestType: NSPersistentStoreRequestType { .batchDeleteRequestType }

    open override func copy(with zone: NSZone? = nil) -> Any {
        let copy =
            _objectIDs.map { NSBatchDeleteRequest(objectIDs: $0) } ?? NSBatchDeleteRequest(fetchRequest: _fetchRequest)
        copy.resultType = resultType
        copy.affectedStores = affectedStores
        return copy
    }

    open override var description: String {
        "<NSBatchDeleteRequest: \(Unmanaged.passUnretained(self).toOpaque())> (fetchRequest: \(_fetchRequest); "
            + "resultType: \(resultType.rawValue))"
    }
}
