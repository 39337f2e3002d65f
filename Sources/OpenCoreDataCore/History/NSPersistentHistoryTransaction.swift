import Foundation

/// The changes one save (or one batch request) made to one store, with who made them and when.
///
/// ```swift
/// for transaction in transactions where transaction.author != "importer" {
///     viewContext.mergeChanges(fromContextDidSave: transaction.objectIDNotification())
/// }
/// ```
open class NSPersistentHistoryTransaction: NSObject, NSCopying, KeyValueCoding, @unchecked Sendable {
    // @unchecked: `_changes` is filled in by the store before the transaction is returned, then only read.
    let _transactionNumber: Int64
    let _timestamp: Date
    let _storeID: String
    let _author: String?
    let _bundleID: String
    let _processID: String
    let _contextName: String?
    var _changes: [NSPersistentHistoryChange]?

    package init(
        transactionNumber: Int64, timestamp: Date, storeID: String, author: String?, bundleID: String,
        processID: String, contextName: String?, changes: [NSPersistentHistoryChange]?
    ) {
        _transactionNumber = transactionNumber
        _timestamp = timestamp
        _storeID = storeID
        _author = author
        _bundleID = bundleID
        _processID = processID
        _contextName = contextName
        _changes = changes
        super.init()
        for change in changes ?? [] { change._transaction = self }
    }

    /// The entity of history transactions, for `fetchHistory(withFetch:)` requests.
    open class var entityDescription: NSEntityDescription? { PersistentHistoryModel.transaction }

    /// The entity of history transactions (the same for every context).
    open class func entityDescription(with context: NSManagedObjectContext) -> NSEntityDescription? {
        entityDescription
    }

    /// A fetch request of history transactions, to give a predicate and pass to `fetchHistory(withFetch:)`.
    ///
    /// ```swift
    /// let fetch = NSPersistentHistoryTransaction.fetchRequest!
    /// fetch.predicate = NSPredicate(format: "author != %@", "importer")
    /// let request = NSPersistentHistoryChangeRequest.fetchHistory(withFetch: fetch)
    /// ```
    open class var fetchRequest: NSFetchRequest<NSFetchRequestResult>? {
        let request = NSFetchRequest<NSFetchRequestResult>()
        request.entity = entityDescription
        return request
    }

    /// When the transaction was committed.
    open var timestamp: Date { _timestamp }
    /// The changes, in the order they were recorded; `nil` when fetched with `.transactionsOnly`.
    open var changes: [NSPersistentHistoryChange]? { _changes }
    /// The transaction's number in its store's history: numbers grow with every transaction.
    open var transactionNumber: Int64 { _transactionNumber }
    /// The identifier of the store the transaction changed.
    open var storeID: String { _storeID }
    /// The bundle identifier of the program that made the transaction (its process name when it has no bundle).
    open var bundleID: String { _bundleID }
    /// The process that made the transaction, by name.
    open var processID: String { _processID }
    /// The name of the context that saved (`NSManagedObjectContext.name`).
    open var contextName: String? { _contextName }
    /// The saving context's `transactionAuthor`.
    open var author: String? { _author }
    /// The token of this transaction: history after it starts with the next transaction.
    open var token: NSPersistentHistoryToken {
        NSPersistentHistoryToken(storeTokens: [_storeID: _transactionNumber])
    }

    /// A did-save notification whose `userInfo` holds the IDs of the objects the transaction inserted, updated and
    /// deleted (`NSInsertedObjectsKey`…), for `NSManagedObjectContext.mergeChanges(fromContextDidSave:)`.
    open func objectIDNotification() -> Notification {
        var inserted = Set<NSManagedObjectID>()
        var updated = Set<NSManagedObjectID>()
        var deleted = Set<NSManagedObjectID>()
        for change in _changes ?? [] {
            switch change._changeType {
            case .insert: inserted.insert(change._changedObjectID)
            case .update: updated.insert(change._changedObjectID)
            case .delete: deleted.insert(change._changedObjectID)
            }
        }
        // An object inserted and changed again in one transaction reads as inserted.
        updated.subtract(inserted)
        return Notification(
            name: .NSManagedObjectContextDidSave, object: nil,
            userInfo: [NSInsertedObjectsKey: inserted, NSUpdatedObjectsKey: updated, NSDeletedObjectsKey: deleted])
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    public func value(forKey key: String) -> Any? {
        switch key {
        case "timestamp": return _timestamp
        case "changes": return _changes
        case "transactionNumber": return NSNumber(value: _transactionNumber)
        case "storeID": return _storeID
        case "bundleID": return _bundleID
        case "processID": return _processID
        case "contextName": return _contextName
        case "author": return _author
        case "token": return token
        default: return nil
        }
    }

    open override var description: String {
        "<NSPersistentHistoryTransaction: \(Unmanaged.passUnretained(self).toOpaque())> {transactionNumber: "
            + "\(_transactionNumber), timestamp: \(_timestamp), author: \(_author ?? "(null)"), contextName: "
            + "\(_contextName ?? "(null)"), storeID: \(_storeID), changes: \(_changes?.count ?? 0)}"
    }
}
