import Foundation
import OpenCoreData
import OpenCoreDataCore

/// Persistent history (`NSPersistentHistoryTrackingKey`), as the SQLite store keeps it: every save and batch request
/// records one transaction in Apple's tables of the store's schema (`PostgreSQLSchema+History.swift`), inside its
/// own database transaction, so that a save the server refuses, or that is rolled back, records nothing, and history
/// and data never disagree, in any process.
extension PostgreSQLStore {
    /// Whether the store was added with `NSPersistentHistoryTrackingKey` (true, or a dictionary of its options).
    var tracksHistoryOption: Bool {
        switch options?[NSPersistentHistoryTrackingKey] {
        case nil: return false
        case is NSDictionary, is [String: Any], is [AnyHashable: Any]: return true
        case let value: return Self.flag(value)
        }
    }

    /// Sets history up as the store opens. With the option, the tables are made (or given the tombstone columns the
    /// model needs) unless the store is read-only. Without it, a schema whose history holds transactions is opened
    /// read-only, as the SQLite store (and Apple's) opens such a file: saving without recording would leave holes
    /// that readers of the history could not see. Tables without transactions are left as they are, and so is
    /// everything else without the option.
    func prepareHistory() throws {
        history = nil
        let (connection, schema) = try open()
        do {
            history = try connection.transaction { () -> PostgreSQLHistory? in
                if tracksHistoryOption, !isReadOnly {
                    // The lock that adding a store takes: two processes making the tables do it one after the other.
                    try connection.query(
                        "SELECT pg_advisory_xact_lock(hashtext($1))", ["OpenCoreData " + schema.schema])
                }
                let exists = try PostgreSQLHistorySchema.exists(in: schema, connection: connection)
                guard tracksHistoryOption else {
                    if exists, !isReadOnly,
                        try PostgreSQLHistorySchema.holdsTransactions(in: schema, connection: connection)
                    {
                        isReadOnly = true
                        FileHandle.standardError.write(
                            Data(
                                """
                                OpenCoreData: warning: the PostgreSQL store at \(redactedURL) records persistent \
                                history but was added without NSPersistentHistoryTrackingKey; it is opened read-only. \
                                Add the store with NSPersistentHistoryTrackingKey set to true to change it.

                                """.utf8))
                    }
                    return nil
                }
                if !isReadOnly {
                    try PostgreSQLHistorySchema.prepare(
                        schema, connection: connection, tombstones: PostgreSQLHistorySchema.tombstonesNeeded(by: schema)
                    )
                } else if !exists {
                    return nil
                }
                return PostgreSQLHistory(
                    schema: schema,
                    tombstoneColumns: try PostgreSQLHistorySchema.tombstoneColumns(in: schema, connection: connection))
            }
        } catch let error as PostgreSQLError {
            throw Self.error(
                NSPersistentStoreOpenError,
                "Could not set up the persistent history of the PostgreSQL store at \(redactedURL): \(error.description)"
            )
        }
    }

    /// The user info of a remote change notification for a commit whose `NOTIFY` carried `payload`: the store's URL
    /// and identifier and, when the store records history, the token of the last transaction at that commit.
    static func remoteChangeUserInfo(_ base: [AnyHashable: Any], payload: String, recordsHistory: Bool)
        -> [AnyHashable: Any]
    {
        var userInfo = base
        if recordsHistory, let identifier = base[NSStoreUUIDKey] as? String, let number = Int64(payload) {
            userInfo[NSPersistentHistoryTokenKey] = NSPersistentHistoryToken(storeTokens: [identifier: number])
        }
        return userInfo
    }

    /// The payload of the `NOTIFY` a commit sends: the number of the store's last transaction when it records history
    /// (read in the committing transaction, which holds the counter if it recorded one), else nothing.
    var notifyPayloadSQL: String {
        guard history != nil, let schema else { return "''" }
        return """
            COALESCE((SELECT "Z_MAX"::text FROM \(schema.qualified("Z_PRIMARYKEY")) \
            WHERE "Z_ENT" = \(PostgreSQLHistorySchema.transactionEntity)), '')
            """
    }

    // MARK: Saves

    /// The tombstones of the rows a save deletes, read before they go (none without history or preserved attributes).
    func historyTombstones(of changes: StoreSaveChanges, connection: PostgreSQLConnection, schema: PostgreSQLSchema)
        throws -> [PostgreSQLHistoryKey: [String?]]
    {
        guard let history, history.tombstoneColumns > 0, !changes.deleted.isEmpty else { return [:] }
        let rows = changes.deleted.compactMap { change -> (entity: PostgreSQLEntity, key: Int64)? in
            guard let entity = schema.entity(change.objectID.entity), let key = key(of: change.objectID) else {
                return nil
            }
            return (entity, key)
        }
        return try history.tombstones(of: rows, connection: connection)
    }

    /// Records the transaction of a save that was written (in its database transaction).
    func recordHistory(
        of changes: StoreSaveChanges, tombstones: [PostgreSQLHistoryKey: [String?]], connection: PostgreSQLConnection,
        schema: PostgreSQLSchema
    ) throws {
        guard let history else { return }
        var recorded: [PostgreSQLHistoryChange] = []
        recorded.reserveCapacity(changes.inserted.count + changes.updated.count + changes.deleted.count)
        for change in changes.inserted {
            guard let entity = schema.entity(change.objectID.entity), let key = key(of: change.objectID) else {
                continue
            }
            recorded.append(PostgreSQLHistoryChange(type: .insert, entity: entity.number, key: key))
        }
        for change in changes.updated {
            guard let entity = schema.entity(change.objectID.entity), let key = key(of: change.objectID) else {
                continue
            }
            let slots = entity.entity._caches.slots
            let names = slots.indices.filter { change.changedSlots.contains($0) }.map { slots[$0].name }
            guard !names.isEmpty else { continue }
            let bitmap = history.layout.columnsBitmap(of: names, entity: entity.entity)
            recorded.append(PostgreSQLHistoryChange(type: .update, entity: entity.number, key: key, columns: bitmap))
        }
        for change in changes.deleted {
            guard let entity = schema.entity(change.objectID.entity), let key = key(of: change.objectID) else {
                continue
            }
            let tombstone = tombstones[PostgreSQLHistoryKey(entity: entity.number, key: key)] ?? []
            recorded.append(
                PostgreSQLHistoryChange(type: .delete, entity: entity.number, key: key, tombstone: tombstone))
        }
        try history.record(recorded, author: changes.author, connection: connection)
    }

    // MARK: Batch requests

    /// Records a batch update of the rows `(key, entity)` that set the attributes named `names`.
    func recordBatchUpdate(
        _ rows: [(key: Int64, entity: Int64)], names: [String], author: StoreTransactionAuthor,
        connection: PostgreSQLConnection, schema: PostgreSQLSchema
    ) throws {
        guard let history else { return }
        var bitmaps: [Int64: Data] = [:]
        let changes = rows.compactMap { row -> PostgreSQLHistoryChange? in
            guard let member = schema.entity(number: row.entity) else { return nil }
            if bitmaps[row.entity] == nil {
                bitmaps[row.entity] = history.layout.columnsBitmap(of: names, entity: member.entity)
            }
            return PostgreSQLHistoryChange(
                type: .update, entity: row.entity, key: row.key, columns: bitmaps[row.entity])
        }
        try history.record(changes, author: author, connection: connection)
    }

    /// Records a batch insert of the rows `keys` of `entity`.
    func recordBatchInsert(
        _ keys: [Int64], entity: PostgreSQLEntity, author: StoreTransactionAuthor, connection: PostgreSQLConnection
    ) throws {
        guard let history else { return }
        try history.record(
            keys.map { PostgreSQLHistoryChange(type: .insert, entity: entity.number, key: $0) }, author: author,
            connection: connection)
    }

    /// The tombstones of the rows a batch delete removes, read before they go.
    func batchDeleteTombstones(
        _ rows: [(entity: Int64, key: Int64)], connection: PostgreSQLConnection, schema: PostgreSQLSchema
    ) throws -> [PostgreSQLHistoryKey: [String?]] {
        guard let history, history.tombstoneColumns > 0 else { return [:] }
        let mapped = rows.compactMap { row in schema.entity(number: row.entity).map { (entity: $0, key: row.key) } }
        return try history.tombstones(of: mapped, connection: connection)
    }

    /// Records a batch delete of `rows`, with their tombstones.
    func recordBatchDelete(
        _ rows: [(entity: Int64, key: Int64)], tombstones: [PostgreSQLHistoryKey: [String?]],
        author: StoreTransactionAuthor, connection: PostgreSQLConnection
    ) throws {
        guard let history else { return }
        let changes = rows.map { row in
            PostgreSQLHistoryChange(
                type: .delete, entity: row.entity, key: row.key,
                tombstone: tombstones[PostgreSQLHistoryKey(entity: row.entity, key: row.key)] ?? [])
        }
        try history.record(changes, author: author, connection: connection)
    }
}

extension PostgreSQLStore: PersistentStoreHistoryTracking {
    package var _hasHistory: Bool { history != nil }

    private func openHistory() throws -> (PostgreSQLHistory, PostgreSQLConnection) {
        let (connection, _) = try open()
        guard let history else {
            throw Self.error(
                NSPersistentStoreUnsupportedRequestTypeError,
                "The PostgreSQL store at \(redactedURL) does not record persistent history",
                userInfo: [NSAffectedStoresErrorKey: [self]])
        }
        return (history, connection)
    }

    package func _historyTransactions(in range: PersistentHistoryRange, withChanges: Bool) throws
        -> [NSPersistentHistoryTransaction]
    {
        let (history, connection) = try openHistory()
        do {
            // One snapshot: the changes read are those of the transactions read, whatever commits meanwhile.
            return try connection.transaction {
                try connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                return try history.transactions(
                    in: range, withChanges: withChanges, store: self, connection: connection)
            }
        } catch {
            throw self.error(error, code: NSPersistentStoreOperationError, action: "reading the persistent history of")
        }
    }

    package func _deleteHistory(in range: PersistentHistoryRange) throws -> Int {
        guard !isReadOnly else {
            throw Self.error(NSPersistentStoreSaveError, "The PostgreSQL store at \(redactedURL) was added read-only")
        }
        let (history, connection) = try openHistory()
        do {
            return try connection.transaction { try history.delete(range, connection: connection) }
        } catch {
            throw self.error(error, code: NSPersistentStoreOperationError, action: "deleting the persistent history of")
        }
    }

    package func _lastHistoryTransactionNumber() throws -> Int64 {
        let (history, connection) = try openHistory()
        do {
            return try history.lastTransactionNumber(connection: connection)
        } catch {
            throw self.error(error, code: NSPersistentStoreOperationError, action: "reading the persistent history of")
        }
    }

    package func _historyWasDeleted(after number: Int64) throws -> Bool {
        let (history, connection) = try openHistory()
        do {
            return try history.hasDeletedTransactions(after: number, connection: connection)
        } catch {
            throw self.error(error, code: NSPersistentStoreOperationError, action: "reading the persistent history of")
        }
    }
}
