/// The outcome of an `NSBatchUpdateRequest`: whether it succeeded, how many objects it updated, or their IDs, as
/// the request's `resultType` asked.
///
/// ```swift
/// request.resultType = .updatedObjectIDsResultType
/// let updated = (try context.execute(request) as? NSBatchUpdateResult)?.result as? [NSManagedObjectID]
/// ```
open class NSBatchUpdateResult: NSPersistentStoreResult, @unchecked Sendable {
    // @unchecked: every stored property is a constant, set by the store that made the result.
    let _result: Any?
    let _resultType: NSBatchUpdateRequestResultType

    init(result: Any?, resultType: NSBatchUpdateRequestResultType) {
        _result = result
        _resultType = resultType
        super.init()
    }

    /// `true` (as an `NSNumber`) for `.statusOnlyResultType`, the number of updated objects for
    /// `.updatedObjectsCountResultType`, their `[NSManagedObjectID]` for `.updatedObjectIDsResultType`.
    open var result: Any? { _result }

    /// The request's `resultType`.
    open var resultType: NSBatchUpdateRequestResultType { _resultType }
}
