import Foundation
import OpenCoreData
import OpenCoreDataCore

/// Fetching beside the store's other calls. The coordinator calls a store one call at a time; a fetch that arrives
/// while another call (a save, another fetch) has the store reads through a connection of the store's pool instead
/// of waiting (`PostgreSQLConnectionPool`), and sees what was last committed, as any other client of the server
/// would. Such a fetch leaves nothing in the store for later calls: a request that would (batches loaded on demand,
/// prefetched relationships) waits for its turn instead.
extension PostgreSQLStore: PersistentStoreConcurrentFetching {
    package func fetchRowsBesideOtherCalls(_ request: NSFetchRequest<NSFetchRequestResult>) throws
        -> StoreFetchResult?
    {
        let wantsValues = request.includesPropertyValues && request.resultType != .managedObjectIDResultType
        guard !wantsValues || request.fetchBatchSize == 0,
            request.relationshipKeyPathsForPrefetching?.isEmpty ?? true
        else { return nil }
        do {
            return try readers.withConnection { connection, schema, folds in
                try fetchRows(request, connection: connection, schema: schema, foldsCase: folds)
            }
        } catch let error as PostgreSQLError {
            throw self.error(error, code: NSPersistentStoreOperationError, action: "fetching from")
        }
    }

    /// Lets fetches read beside other calls, through as many connections as the store's options or URL allow.
    func startReading(configuration: PostgreSQLConfiguration, schema: PostgreSQLSchema) throws {
        var size = configuration.poolSize ?? PostgreSQLConnectionPool.defaultMaximumSize
        if let value = options?[NSPersistentStoreConnectionPoolMaxSizeKey] {
            let number: Int? =
                switch value {
                case let number as NSNumber: number.intValue
                case let number as Int: number
                case let text as String: Int(text)
                default: nil
                }
            guard let number, number >= 1 else {
                throw Self.error(
                    NSPersistentStoreOpenError,
                    """
                    The option NSPersistentStoreConnectionPoolMaxSizeKey of the PostgreSQL store at \(redactedURL) \
                    must be a whole number of at least 1, not \(value)
                    """)
            }
            size = number
        }
        readers.start(.init(configuration: configuration, schema: schema, capacity: size - 1))
    }
}
