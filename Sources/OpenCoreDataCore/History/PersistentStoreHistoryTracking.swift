import Foundation

/// Which transactions of one store a history request reads or deletes.
package enum PersistentHistoryRange {
    case all
    case none
    /// Transactions numbered above this.
    case after(Int64)
    /// Transactions numbered up to and including this.
    case through(Int64)
    case afterDate(Date)
    case beforeDate(Date)
}

/// A store that records persistent history (the SQLite store, with `NSPersistentHistoryTrackingKey`): what the
/// coordinator asks of it to run an `NSPersistentHistoryChangeRequest`.
package protocol PersistentStoreHistoryTracking: AnyObject {
    /// Whether the store has history to read: it records history, or it was opened read-only with the option and
    /// holds history tables.
    var _hasHistory: Bool { get }
    /// The transactions in `range`, oldest first, with their changes if `withChanges`.
    func _historyTransactions(in range: PersistentHistoryRange, withChanges: Bool) throws
        -> [NSPersistentHistoryTransaction]
    /// Deletes the transactions in `range`; returns how many changes went with them.
    func _deleteHistory(in range: PersistentHistoryRange) throws -> Int
    /// The number of the last transaction recorded (0 if none).
    func _lastHistoryTransactionNumber() throws -> Int64
    /// Whether transactions after `number` were deleted, so that a token of `number` has expired.
    func _historyWasDeleted(after number: Int64) throws -> Bool
}
