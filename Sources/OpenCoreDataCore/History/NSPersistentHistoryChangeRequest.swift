import Foundation

/// What a persistent history request returns.
public enum NSPersistentHistoryResultType: Int, Sendable {
    /// `true`, as an `NSNumber`.
    case statusOnly = 0
    /// The IDs of the objects that changed.
    case objectIDs = 1
    /// The number of changes (for a deletion: of transactions deleted).
    case count = 2
    /// The transactions, without their changes.
    case transactionsOnly = 3
    /// The changes, without their transactions.
    case changesOnly = 4
    /// The transactions with their changes (the default).
    case transactionsAndChanges = 5
}

/// A request to read or purge the persistent history of the stores that record it (`NSPersistentHistoryTrackingKey`),
/// run with `NSManagedObjectContext.execute(_:)`.
///
/// ```swift
/// let request = NSPersistentHistoryChangeRequest.fetchHistory(after: lastToken)
/// let result = try backgroundContext.execute(request) as? NSPersistentHistoryResult
/// for transaction in result?.result as? [NSPersistentHistoryTransaction] ?? [] {
///     viewContext.perform { viewContext.mergeChanges(fromContextDidSave: transaction.objectIDNotification()) }
/// }
/// try backgroundContext.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: lastToken))
/// ```
///
/// A store that does not record history refuses the request with `NSPersistentStoreUnsupportedRequestTypeError`; a
/// token older than history that was deleted, with `NSPersistentHistoryTokenExpiredError`.
open class NSPersistentHistoryChangeRequest: NSPersistentStoreRequest, @unchecked Sendable {
    // @unchecked: as NSPersistentStoreRequest: configured, then executed; not changed while executing.
    enum Bound {
        case all
        /// No transaction (a deletion before a `nil` token or transaction).
        case nothing
        case date(Date)
        case token(NSPersistentHistoryToken)
        case transactionNumber(storeID: String, number: Int64)
    }

    enum Operation {
        case fetch
        case delete
    }

    var _operation: Operation = .fetch
    var _bound: Bound = .all
    var _fetchRequest: NSFetchRequest<NSFetchRequestResult>?

    /// What the request returns; `.transactionsAndChanges` by default.
    open var resultType: NSPersistentHistoryResultType = .transactionsAndChanges

    public required override init() {
        super.init()
    }

    private static func make(_ operation: Operation, _ bound: Bound) -> Self {
        let request = self.init()
        request._operation = operation
        request._bound = bound
        if operation == .delete { request.resultType = .statusOnly }
        return request
    }

    /// The history recorded after `date`.
    open class func fetchHistory(after date: Date) -> Self { make(.fetch, .date(date)) }

    /// The history after the transaction `token` marks; all of it for `nil`.
    open class func fetchHistory(after token: NSPersistentHistoryToken?) -> Self {
        make(.fetch, token.map(Bound.token) ?? .all)
    }

    /// The history after `transaction`; all of it for `nil`.
    open class func fetchHistory(after transaction: NSPersistentHistoryTransaction?) -> Self {
        make(
            .fetch,
            transaction.map { .transactionNumber(storeID: $0._storeID, number: $0._transactionNumber) } ?? .all)
    }

    /// The transactions (or, for a fetch request of `NSPersistentHistoryChange.entityDescription`, the changes) that
    /// `fetchRequest`'s predicate selects, in the order of its sort descriptors.
    open class func fetchHistory(withFetch fetchRequest: NSFetchRequest<NSFetchRequestResult>) -> Self {
        let request = make(.fetch, .all)
        request._fetchRequest = fetchRequest
        return request
    }

    /// Deletes the history recorded before `date`.
    open class func deleteHistory(before date: Date) -> Self { make(.delete, .date(date)) }

    /// Deletes the history up to and including the transaction `token` marks; none for `nil`.
    open class func deleteHistory(before token: NSPersistentHistoryToken?) -> Self {
        make(.delete, token.map(Bound.token) ?? .nothing)
    }

    /// Deletes the history up to and including `transaction`; none for `nil`.
    open class func deleteHistory(before transaction: NSPersistentHistoryTransaction?) -> Self {
        make(
            .delete,
            transaction.map { .transactionNumber(storeID: $0._storeID, number: $0._transactionNumber) } ?? .nothing)
    }

    /// The token the request reads after (or deletes before), if it was made with one.
    open var token: NSPersistentHistoryToken? {
        switch _bound {
        case .token(let token): return token
        case .transactionNumber(let store, let number):
            return NSPersistentHistoryToken(storeTokens: [store: number])
        default: return nil
        }
    }

    /// The fetch request of `fetchHistory(withFetch:)`.
    open var fetchRequest: NSFetchRequest<NSFetchRequestResult>? {
        get { _fetchRequest }
        set { _fetchRequest = newValue }
    }

    open override func copy(with zone: NSZone? = nil) -> Any {
        let copy = Self.init()
        copy._operation = _operation
        copy._bound = _bound
        copy._fetchRequest = _fetchRequest
        copy.resultType = resultType
        copy.affectedStores = affectedStores
        return copy
    }

    open override var description: String {
        "<NSPersistentHistoryChangeRequest: \(Unmanaged.passUnretained(self).toOpaque())> "
            + "(\(_operation == .fetch ? "fetch" : "delete"), resultType: \(resultType))"
    }
}
