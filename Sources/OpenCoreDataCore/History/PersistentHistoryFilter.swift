import Foundation

/// What a history fetch hands back: the fetch request of `fetchHistory(withFetch:)` applied to the transactions read,
/// then the request's result type.
enum PersistentHistoryFilter {
    /// The transactions (for a fetch request of transactions) or the transactions holding only the changes (for one
    /// of changes) that `fetch`'s predicate selects, in the order of its sort descriptors.
    static func apply(_ fetch: NSFetchRequest<NSFetchRequestResult>, to transactions: [NSPersistentHistoryTransaction])
        -> [NSPersistentHistoryTransaction]
    {
        let sorts = fetch.sortDescriptors ?? []
        if fetch.entity?._name == PersistentHistoryModel.change._name {
            var kept: [NSPersistentHistoryTransaction] = []
            for transaction in transactions {
                var changes = transaction._changes ?? []
                if let predicate = fetch.predicate { changes = changes.filter { predicate.evaluate(with: $0) } }
                guard !changes.isEmpty else { continue }
                if !sorts.isEmpty { changes = sorted(changes, by: sorts) }
                transaction._changes = changes
                kept.append(transaction)
            }
            return kept
        }
        var kept = transactions
        if let predicate = fetch.predicate { kept = kept.filter { predicate.evaluate(with: $0) } }
        return sorts.isEmpty ? kept : sorted(kept, by: sorts)
    }

    private static func sorted<T: AnyObject>(_ values: [T], by descriptors: [NSSortDescriptor]) -> [T] {
        values.sorted(using: descriptors)
    }

    /// The result of `transactions` as `resultType` asks.
    static func result(_ transactions: [NSPersistentHistoryTransaction], resultType: NSPersistentHistoryResultType)
        -> NSPersistentHistoryResult
    {
        let result: Any
        switch resultType {
        case .statusOnly:
            result = NSNumber(value: true)
        case .count:
            result = NSNumber(value: transactions.reduce(0) { $0 + ($1._changes?.count ?? 0) })
        case .objectIDs:
            var seen = Set<NSManagedObjectID>()
            var ids: [NSManagedObjectID] = []
            for change in transactions.lazy.flatMap({ $0._changes ?? [] })
            where seen.insert(change._changedObjectID)
                .inserted
            {
                ids.append(change._changedObjectID)
            }
            result = ids
        case .transactionsOnly:
            for transaction in transactions { transaction._changes = nil }
            result = transactions
        case .changesOnly:
            let changes = transactions.flatMap { $0._changes ?? [] }
            for change in changes { change._transaction = nil }
            result = changes
        case .transactionsAndChanges:
            result = transactions
        }
        return NSPersistentHistoryResult(result: result, resultType: resultType)
    }
}
