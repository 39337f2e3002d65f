/// The outcome of an `NSBatchInsertRequest`: whether it succeeded, how many objects it inserted, or their IDs, as
/// the request's `resultType` asked.
///
/// ```swift
/// request.resultType = .objectIDs
/// let inserted = (try context.execute(request) as? NSBatchInsertResult)?.result as? [NSManagedObjectID]
/// ```
open class NSBatchInsertResult: NSPersistentStoreResult, @unchecked Sendable {
    // @unchecked: every stored property is a constant, set by the store that made the result.
    let _result: Any?
    let _resultType: NSBatchInsertRequestResultType

    init(result: Any?, resultType: NSBatchInsertRequestResultType) {
        _result = result
        _resultType = resultType
        super.init()
    }

    /// `true` (as an `NSNumber`) for `.statusOnly`, the number of inserted objects for `.count`, their
    /// `[NSManagedObjectID]` for `.objectIDs`.
    open var result: Any? { _result }

    /// The request's `resultType`.
    open var resultType: NSBatchInsertRequestResultType { _resultType }
}
