import Foundation

/// Fetching beside a save. With a write-ahead log, SQLite lets readers see the last commit while a writer writes;
/// the store keeps a second, read-only connection for fetches that arrive while another call (a save, a batch
/// request, a long fetch) has the store. Such a fetch reads the file alone: it neither fills nor consults the row
/// cache, and a request that would leave state in the store for later calls (batches loaded on demand, prefetched
/// destinations) waits for its turn instead.
extension NSSQLiteStore: PersistentStoreConcurrentFetching {
    package func fetchRowsBesideOtherCalls(_ request: NSFetchRequest<NSFetchRequestResult>) throws
        -> StoreFetchResult?
    {
        let wantsValues = request.includesPropertyValues && request.resultType != .managedObjectIDResultType
        guard _isWriteAheadLogged, !wantsValues || request.fetchBatchSize == 0,
            request.relationshipKeyPathsForPrefetching?.isEmpty ?? true,
            let reference = _cachedObjectIDReference
        else { return nil }
        _readerLock.lock()
        defer { _readerLock.unlock() }
        guard let mapping = _readerMapping, let url = _url else { return nil }
        do {
            return try _fetchRowsLeavingNoState(
                request, connection: try _readerConnection(url), mapping: mapping, storeReference: reference)
        } catch let error as SQLiteError {
            throw error.coreDataError(url: url, action: "fetching from")
        }
    }

    /// The answer to `request` read through `connection` alone, leaving nothing in the store (no row cache entries,
    /// no batches, no prefetched destinations): for fetches beside other calls and at a query generation. Every row
    /// comes with its values (a fetch in batches loads them all at once); IDs hold `storeReference`.
    func _fetchRowsLeavingNoState(
        _ request: NSFetchRequest<NSFetchRequestResult>, connection: SQLiteConnection, mapping: SQLiteModelMapping,
        storeReference reference: ObjectIDStoreReference
    ) throws -> StoreFetchResult {
        guard let requested = request.entity, let entity = mapping.entity(requested) else { return .rows([]) }
        let wantsValues = request.includesPropertyValues && request.resultType != .managedObjectIDResultType
        let generator = SQLiteQueryGenerator(mapping: mapping, store: self)
        if request.resultType == .countResultType {
            let plan = generator.plan(request, entity: entity, selection: .count)
            if plan.isComplete {
                let statement = try connection.statement(plan.sql)
                return .count(Int(try statement.scalarInteger(plan.arguments) ?? 0))
            }
            return .candidates(
                try _rows(
                    plan, of: entity.table, connection: connection, mapping: mapping, values: true,
                    storeReference: reference))
        }
        let plan = generator.plan(request, entity: entity, selection: wantsValues ? .rows : .keys)
        let rows = try _rows(
            plan, of: entity.table, connection: connection, mapping: mapping,
            values: wantsValues || !plan.isComplete,
            storeReference: reference, limit: plan.isComplete ? request.fetchLimit : 0)
        return plan.isComplete ? .rows(rows) : .candidates(rows)
    }

    /// The reading connection, opened when first needed. Called under `_readerLock`.
    private func _readerConnection(_ url: URL) throws -> SQLiteConnection {
        if let reader = _reader { return reader }
        let reader = try Self._connect(url, readOnly: true, create: false, timeout: _timeout)
        _reader = reader
        return reader
    }

    /// Lets fetches read beside other calls with `mapping`, once the store is open and checked.
    func _startReading(with mapping: SQLiteModelMapping) {
        _readerLock.lock()
        defer { _readerLock.unlock() }
        _readerMapping = mapping
    }

    /// Closes the reading connection: the store is being removed or closed.
    func _stopReading() {
        _readerLock.lock()
        defer { _readerLock.unlock() }
        _reader?.close()
        _reader = nil
        _readerMapping = nil
    }
}
