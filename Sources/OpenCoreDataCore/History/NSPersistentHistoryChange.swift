import Foundation

/// What happened to an object in a persistent history change.
public enum NSPersistentHistoryChangeType: Int, Sendable {
    case insert = 0
    case update = 1
    case delete = 2
}

/// One object's insertion, update or deletion, as persistent history recorded it.
///
/// ```swift
/// for change in transaction.changes ?? [] where change.changeType == .delete {
///     print(change.changedObjectID, change.tombstone?["name"] ?? "")
/// }
/// ```
open class NSPersistentHistoryChange: NSObject, NSCopying, KeyValueCoding, @unchecked Sendable {
    // @unchecked: constants, and a weak reference to its transaction set before the change is returned.
    let _changeID: Int64
    let _changedObjectID: NSManagedObjectID
    let _changeType: NSPersistentHistoryChangeType
    let _tombstone: [AnyHashable: Any]?
    let _updatedProperties: Set<NSPropertyDescription>?
    /// Weak: the transaction holds its changes. (Results of `.changesOnly` have no transaction, as Apple's.)
    weak var _transaction: NSPersistentHistoryTransaction?

    package init(
        changeID: Int64, changedObjectID: NSManagedObjectID, changeType: NSPersistentHistoryChangeType,
        tombstone: [AnyHashable: Any]?, updatedProperties: Set<NSPropertyDescription>?
    ) {
        _changeID = changeID
        _changedObjectID = changedObjectID
        _changeType = changeType
        _tombstone = tombstone
        _updatedProperties = updatedProperties
        super.init()
    }

    /// The entity of history changes, for `fetchHistory(withFetch:)` requests.
    open class var entityDescription: NSEntityDescription? { PersistentHistoryModel.change }

    /// The entity of history changes (the same for every context).
    open class func entityDescription(with context: NSManagedObjectContext) -> NSEntityDescription? {
        entityDescription
    }

    /// A fetch request of history changes, to give a predicate and pass to `fetchHistory(withFetch:)`.
    open class var fetchRequest: NSFetchRequest<NSFetchRequestResult>? {
        let request = NSFetchRequest<NSFetchRequestResult>()
        request.entity = entityDescription
        return request
    }

    /// The change's number in its store's history.
    open var changeID: Int64 { _changeID }
    /// The object that changed.
    open var changedObjectID: NSManagedObjectID { _changedObjectID }
    /// Whether the object was inserted, updated or deleted.
    open var changeType: NSPersistentHistoryChangeType { _changeType }
    /// For a deletion: the values of the attributes marked `preservesValueInHistoryOnDeletion`, by name, as they were
    /// when the object was deleted.
    open var tombstone: [AnyHashable: Any]? { _tombstone }
    /// The transaction that made the change (`nil` when fetched with `.changesOnly`).
    open var transaction: NSPersistentHistoryTransaction? { _transaction }
    /// For an update: the properties that changed; `nil` for insertions and deletions.
    open var updatedProperties: Set<NSPropertyDescription>? { _updatedProperties }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    public func value(forKey key: String) -> Any? {
        switch key {
        case "changeID": return NSNumber(value: _changeID)
        case "changedObjectID": return _changedObjectID
        case "changeType": return NSNumber(value: _changeType.rawValue)
        case "changedEntity": return _changedObjectID._entity
        case "tombstone": return _tombstone
        case "transaction": return _transaction
        case "updatedProperties": return _updatedProperties
        default: return nil
        }
    }

    open override var description: String {
        "<NSPersistentHistoryChange: \(Unmanaged.passUnretained(self).toOpaque())> {changeID: \(_changeID), "
            + "changedObjectID: \(_changedObjectID), changeType: \(_changeType), transactionNumber: "
            + "\(_transaction.map { String($0._transactionNumber) } ?? "(none)")}"
    }
}
