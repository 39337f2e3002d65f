/// The outcome of an `NSBatchDeleteRequest`: whether it succeeded, how many objects it deleted, or their IDs, as
/// the request's `resultType` asked.
///
/// ```swift
/// request.resultType = .resultTypeObjectIDs
/// let result = try context.execute(request) as? NSBatchDeleteResult
/// let deleted = result?.result as? [NSManagedObjectID] ?? []
/// NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSDeletedObjectsKey: deleted], into: [context])
/// ```
open class NSBatchDeleteResult: NSPersistentStoreResult, @unchecked Sendable {
    // @unchecked: every stored property is a constant, set by the store that made the result.
    let _result: Any?
    let _resultType: NSBatchDeleteRequestResultType

    init(result: Any?, resultType: NSBatchDeleteRequestResultType) {
        _result = result
        _resultType = resultType
        super.init()
    }

    /// `true` (as an `NSNumber`) for `.resultTypeStatusOnly`, the number of deleted objects for `.resultTypeCount`,
    /// their `[NSManagedObjectID]` for `.resultTypeObjectIDs`.
    open var result: Any? { _result }

    /// The request's `resultType`.
    open var resultType: NSBatchDeleteRequestResultType { _resultType }
}
