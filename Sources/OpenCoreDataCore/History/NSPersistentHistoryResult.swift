/// The outcome of an `NSPersistentHistoryChangeRequest`, as its `resultType` asked: `true`, a count, object IDs,
/// transactions or changes.
///
/// ```swift
/// let result = try context.execute(request) as? NSPersistentHistoryResult
/// let transactions = result?.result as? [NSPersistentHistoryTransaction] ?? []
/// ```
open class NSPersistentHistoryResult: NSPersistentStoreResult, @unchecked Sendable {
    // @unchecked: every stored property is a constant, set by the store that made the result.
    let _result: Any?
    let _resultType: NSPersistentHistoryResultType

    init(result: Any?, resultType: NSPersistentHistoryResultType) {
        _result = result
        _resultType = resultType
        super.init()
    }

    /// `true` (`NSNumber`) for `.statusOnly`, an `NSNumber` count for `.count`, `[NSManagedObjectID]` for
    /// `.objectIDs`, `[NSPersistentHistoryTransaction]` for the transaction types, `[NSPersistentHistoryChange]` for
    /// `.changesOnly`.
    open var result: Any? { _result }

    /// The request's `resultType`.
    open var resultType: NSPersistentHistoryResultType { _resultType }
}
