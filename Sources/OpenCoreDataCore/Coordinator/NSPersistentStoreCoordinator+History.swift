import Foundation

/// Persistent history through the coordinator: the current token, and history requests spread over its stores.
extension NSPersistentStoreCoordinator {
    /// A token marking the last transaction of each of `stores` (every store of the coordinator for `nil`) that
    /// records persistent history; `nil` if none does.
    ///
    /// ```swift
    /// let token = coordinator.currentPersistentHistoryToken(fromStores: nil)
    /// ```
    public func currentPersistentHistoryToken(fromStores stores: [Any]?) -> NSPersistentHistoryToken? {
        _withAllStores {
            let candidates = stores.map { $0.compactMap { $0 as? NSPersistentStore } } ?? _stores
            var tokens: [String: Int64] = [:]
            for store in candidates {
                guard let history = store as? PersistentStoreHistoryTracking, history._hasHistory,
                    let identifier = store.identifier, let number = try? history._lastHistoryTransactionNumber()
                else { continue }
                tokens[identifier] = number
            }
            return tokens.isEmpty ? nil : NSPersistentHistoryToken(storeTokens: tokens)
        }
    }

    /// Runs a history request over the request's `affectedStores` (every store when `nil`), which must all record
    /// history.
    func _executeHistoryRequest(_ request: NSPersistentHistoryChangeRequest) throws -> NSPersistentHistoryResult {
        try _withAllStores {
            var tracked: [(store: NSPersistentStore, history: PersistentStoreHistoryTracking)] = []
            for store in request.affectedStores ?? _stores {
                guard let history = store as? PersistentStoreHistoryTracking, history._hasHistory else {
                    throw coreDataError(
                        NSPersistentStoreUnsupportedRequestTypeError,
                        """
                        The store at \(store._url?.path ?? "(memory)") does not record persistent history, so it \
                        cannot run an NSPersistentHistoryChangeRequest: add it with the option \
                        NSPersistentHistoryTrackingKey set to true (a SQLite or PostgreSQL store)
                        """,
                        userInfo: [NSAffectedStoresErrorKey: [store], "request": request])
                }
                tracked.append((store, history))
            }
            let ranges = try _historyRanges(request, stores: tracked)
            switch request._operation {
            case .delete:
                var deleted = 0
                for (index, entry) in tracked.enumerated() where ranges[index] != nil {
                    deleted += try entry.history._deleteHistory(in: ranges[index]!)
                }
                return NSPersistentHistoryResult(
                    result: request.resultType == .count ? NSNumber(value: deleted) : NSNumber(value: true),
                    resultType: request.resultType)
            case .fetch:
                let withChanges = request.resultType != .transactionsOnly || request._fetchRequest != nil
                var transactions: [NSPersistentHistoryTransaction] = []
                for (index, entry) in tracked.enumerated() where ranges[index] != nil {
                    transactions += try entry.history._historyTransactions(
                        in: ranges[index]!, withChanges: withChanges)
                }
                if tracked.count > 1 {
                    transactions = transactions.enumerated().sorted { a, b in
                        (a.element._timestamp, a.offset) < (b.element._timestamp, b.offset)
                    }.map(\.element)
                }
                if let fetch = request._fetchRequest {
                    transactions = PersistentHistoryFilter.apply(fetch, to: transactions)
                }
                return PersistentHistoryFilter.result(transactions, resultType: request.resultType)
            }
        }
    }

    /// The transactions of each store the request selects (`nil` for a store it leaves alone).
    private func _historyRanges(
        _ request: NSPersistentHistoryChangeRequest,
        stores: [(store: NSPersistentStore, history: PersistentStoreHistoryTracking)]
    ) throws -> [PersistentHistoryRange?] {
        let fetching = request._operation == .fetch
        let numbers: [String: Int64]
        switch request._bound {
        case .all: return stores.map { _ in .all }
        case .nothing: return stores.map { _ in PersistentHistoryRange.none }
        case .date(let date): return stores.map { _ in fetching ? .afterDate(date) : .beforeDate(date) }
        case .token(let token): numbers = token._storeTokens
        case .transactionNumber(let store, let number): numbers = [store: number]
        }
        // A token reads (or deletes) in the stores it names; one that names none of them belongs elsewhere.
        let ranges = try stores.map { entry -> PersistentHistoryRange? in
            guard let identifier = entry.store.identifier, let number = numbers[identifier] else { return nil }
            if fetching, try entry.history._historyWasDeleted(after: number) {
                throw coreDataError(
                    NSPersistentHistoryTokenExpiredError,
                    """
                    The persistent history token marks transaction \(number) of the store at \
                    \(entry.store._url?.path ?? "(unknown)"), but history after it has been deleted; read the history \
                    again from the start (fetchHistory(after: nil as NSPersistentHistoryToken?)) and keep a newer token
                    """,
                    userInfo: [NSAffectedStoresErrorKey: [entry.store]])
            }
            return fetching ? .after(number) : .through(number)
        }
        if !stores.isEmpty, ranges.allSatisfy({ $0 == nil }) {
            let named = numbers.keys.sorted().joined(separator: ", ")
            let stored = stores.compactMap { $0.store.identifier }.joined(separator: ", ")
            throw coreDataError(
                NSPersistentStoreOperationError,
                """
                The persistent history token belongs to another store (it names \(named.isEmpty ? "no store" : named); \
                the request's stores are \(stored)): use a token from currentPersistentHistoryToken(fromStores:) or \
                from a transaction of these stores
                """,
                userInfo: [NSAffectedStoresErrorKey: stores.map(\.store)])
        }
        return ranges
    }
}
