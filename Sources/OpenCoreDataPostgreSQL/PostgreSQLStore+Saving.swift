import Foundation
import OpenCoreData
import OpenCoreDataCore

/// Saving: one transaction per save. Each update and deletion names the version the context read (`Z_OPT`); a row
/// that another coordinator or process changed meanwhile is a conflict: the transaction is rolled back and the
/// conflicts go to the saving context's merge policy (`StoreConflicts`, as the SQLite store throws them).
///
/// Primary keys come from `Z_PRIMARYKEY`: one `UPDATE … RETURNING` per root entity takes a block of keys under the
/// row's lock, in a statement of its own, so that no two processes are ever handed the same key and no save waits
/// for another's transaction to end to get keys.
extension PostgreSQLStore {
    package func permanentIDs(for objects: [NSManagedObject]) throws -> [NSManagedObjectID] {
        let (connection, schema) = try open()
        var byTable: [Int64: [Int]] = [:]
        var entities: [PostgreSQLEntity] = []
        for (index, object) in objects.enumerated() {
            guard let entity = schema.entity(object.entity) else {
                throw Self.error(
                    NSPersistentStoreSaveError,
                    "The PostgreSQL store at \(redactedURL) does not hold entity '\(object.entity.name ?? "")'")
            }
            entities.append(entity)
            byTable[entity.table.rootNumber, default: []].append(index)
        }
        var keys = [Int64](repeating: 0, count: objects.count)
        do {
            for (root, indices) in byTable.sorted(by: { $0.key < $1.key }) {
                let last = try reserveKeys(indices.count, root: root, connection, schema)
                for (offset, index) in indices.enumerated() {
                    keys[index] = last - Int64(indices.count) + 1 + Int64(offset)
                }
            }
        } catch {
            throw self.error(error, code: NSPersistentStoreSaveError, action: "making keys in")
        }
        return objects.indices.map { objectID(objects[$0].entity, key: keys[$0]) }
    }

    /// A row whose version differs from the one the saving context read.
    struct VersionMismatch: Error {
        let objectIDs: [NSManagedObjectID]
    }

    package func save(_ changes: StoreSaveChanges) throws -> StoreSaveResult {
        let (connection, schema) = try openForWriting()
        defer { forgetRows(of: changes) }
        let generation = _metadataGeneration
        let metadataChanged = metadata != nil && storedMetadataGeneration != generation
        /// Ends a transaction that wrote the changes: the metadata, and the notice of the commit.
        func finish(_ result: StoreSaveResult) throws -> StoreSaveResult {
            if metadataChanged, let metadata {
                try writeMetadata(metadata, connection: connection, schema: schema)
                storedMetadataGeneration = generation
            }
            // Delivered when the transaction commits, to every process that listens for this store's commits.
            try notifyCommit(connection)
            return result
        }
        do {
            do {
                // The first attempt writes without a savepoint, which would cost every save two round trips: a
                // conflict rolls the transaction back, and the next one resolves it holding the rows' locks.
                return try connection.transaction {
                    try finish(try write(changes, connection: connection, schema: schema))
                }
            } catch let mismatch as VersionMismatch where changes.resolveConflicts != nil {
                return try connection.transaction {
                    try finish(
                        try writeResolvingConflicts(changes, after: mismatch, connection: connection, schema: schema))
                }
            }
        } catch let mismatch as VersionMismatch {
            // Rolled back: the rows as they are now, for the merge policy.
            let expected = Dictionary(
                [changes.updated, changes.deleted].joined().map { ($0.objectID, $0.expectedVersion) },
                uniquingKeysWith: { first, _ in first })
            let conflicts = try mismatch.objectIDs.map { objectID in
                StoreConflict(
                    objectID: objectID, current: try row(for: objectID), expectedVersion: expected[objectID] ?? 0)
            }
            throw StoreConflicts(conflicts)
        } catch {
            if metadataChanged { storedMetadataGeneration = nil }
            throw self.error(error, code: NSPersistentStoreSaveError, action: "saving to")
        }
    }

    /// Writes the changes after a first attempt met rows that moved on (`mismatch`): locks those rows (`FOR UPDATE`),
    /// lets the saving context's merge policy resolve the conflicts against them as they are now, and writes what it
    /// decides instead — in one transaction, so that no other writer can change those rows again in between (resolving
    /// after a rollback let another process slip in each time, and a trump policy gave up under contention). Later
    /// attempts run in savepoints; bounded all the same.
    private func writeResolvingConflicts(
        _ changes: StoreSaveChanges, after mismatch: VersionMismatch, connection: PostgreSQLConnection,
        schema: PostgreSQLSchema
    ) throws -> StoreSaveResult {
        var changes = changes
        var mismatch = mismatch
        var attempt = 1
        while true {
            guard let resolve = changes.resolveConflicts else { throw mismatch }
            let expected = Dictionary(
                [changes.updated, changes.deleted].joined().map { ($0.objectID, $0.expectedVersion) },
                uniquingKeysWith: { first, _ in first })
            let conflicts = try mismatch.objectIDs.map { objectID in
                StoreConflict(
                    objectID: objectID, current: try row(for: objectID, locking: true),
                    expectedVersion: expected[objectID] ?? 0)
            }
            changes = try resolve(StoreConflicts(conflicts))
            changes.resolveConflicts = resolve
            attempt += 1
            guard attempt < 8 else { return try write(changes, connection: connection, schema: schema) }
            try connection.query("SAVEPOINT save_attempt")
            do {
                let result = try write(changes, connection: connection, schema: schema)
                try connection.query("RELEASE SAVEPOINT save_attempt")
                return result
            } catch let next as VersionMismatch {
                try connection.query("ROLLBACK TO SAVEPOINT save_attempt")
                try connection.query("RELEASE SAVEPOINT save_attempt")
                mismatch = next
            }
        }
    }

    private func write(_ changes: StoreSaveChanges, connection: PostgreSQLConnection, schema: PostgreSQLSchema) throws
        -> StoreSaveResult
    {
        var result = StoreSaveResult()
        var mismatched: [NSManagedObjectID] = []
        // Persistent history: tombstones are read before their rows go (none without history).
        let tombstones = try historyTombstones(of: changes, connection: connection, schema: schema)
        func mapped(_ change: StoreSaveObject) throws -> (PostgreSQLEntity, Int64) {
            guard let entity = schema.entity(change.objectID.entity), let key = key(of: change.objectID) else {
                throw Self.error(
                    NSPersistentStoreSaveError,
                    "The object \(change.objectID) is not one of the PostgreSQL store at \(redactedURL)")
            }
            return (entity, key)
        }

        // Deletions: a statement per table and chunk (`deleteRows`), then the join rows of the deleted objects.
        var deletions: [String: (PostgreSQLTable, [PostgreSQLChangedRow])] = [:]
        var joinRows: [String: [Int64]] = [:]
        for change in changes.deleted {
            let (entity, key) = try mapped(change)
            let row = PostgreSQLChangedRow(
                objectID: change.objectID, key: key, expectedVersion: change.forced ? nil : change.expectedVersion)
            deletions[entity.table.name, default: (entity.table, [])].1.append(row)
            for case .join(let table, let source, _, _, _) in entity.toMany.values {
                joinRows[
                    "DELETE FROM \(schema.qualified(table)) WHERE \(quoted(source)) = ANY($1::bigint[])", default: []
                ]
                .append(key)
            }
        }
        for (_, (table, rows)) in deletions.sorted(by: { $0.key < $1.key }) {
            let deleted = try deleteRows(
                rows.sorted { $0.key < $1.key }, table: table, connection: connection, schema: schema)
            // A row changed or deleted underneath the saving context is a conflict, as in the SQLite store.
            mismatched += rows.filter { !deleted.contains($0.key) }.map(\.objectID)
        }
        for (sql, keys) in joinRows.sorted(by: { $0.key < $1.key }) {
            try connection.query(sql, [Self.keyList(keys)])
        }

        // Insertions: a statement per table and few thousand rows (`insertRows`), not a round trip per object.
        var insertions: [ObjectIdentifier: [PostgreSQLNewRow]] = [:]
        for change in changes.inserted {
            let (entity, key) = try mapped(change)
            insertions[ObjectIdentifier(entity.table), default: []].append(
                PostgreSQLNewRow(key: key, entity: entity, values: change.values))
        }
        for rows in insertions.values.sorted(by: { $0[0].entity.table.name < $1[0].entity.table.name }) {
            try insertRows(rows, table: rows[0].entity.table, connection: connection, schema: schema)
        }

        // Updates: a statement per table, set of changed columns and chunk (`updateRows`). Rows in one order (table,
        // key) in every process, so that two saves locking the same rows cannot deadlock.
        var shapes: [[String]: (PostgreSQLTable, [(name: String, type: String)], [PostgreSQLChangedRow])] = [:]
        for change in changes.updated {
            let (entity, key) = try mapped(change)
            var names: [String] = []
            var row = PostgreSQLChangedRow(
                objectID: change.objectID, key: key, expectedVersion: change.forced ? nil : change.expectedVersion)
            for slot in entity.slotColumns.indices where change.changedSlots.contains(slot) {
                for (column, text) in try columnTexts(change.values[slot], slot: slot, entity: entity) {
                    names.append(column)
                    row.texts.append(text)
                }
            }
            let shape = [entity.table.name] + names
            if shapes[shape] == nil {
                let table = entity.table
                let columns = names.map { name in
                    (name: name, type: table.position[name].map { table.columns[$0].type } ?? "text")
                }
                shapes[shape] = (table, columns, [])
            }
            shapes[shape]!.2.append(row)
        }
        var updatedKeys: [String: (PostgreSQLTable, [Int64])] = [:]
        for (table, _, rows) in shapes.values {
            updatedKeys[table.name, default: (table, [])].1 += rows.map(\.key)
        }
        for (_, (table, keys)) in updatedKeys.sorted(by: { $0.key < $1.key }) {
            try lockRows(keys.sorted(), table: table, connection: connection, schema: schema)
        }
        for (_, (table, columns, rows)) in shapes.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            let versions = try updateRows(
                rows.sorted { $0.key < $1.key }, columns: columns, table: table, connection: connection, schema: schema)
            for row in rows {
                if let version = versions[row.key] {
                    result.versions[row.objectID] = version
                } else {
                    mismatched.append(row.objectID)
                }
            }
        }
        if !mismatched.isEmpty { throw VersionMismatch(objectIDs: mismatched) }

        // To-many relationships: join rows and positions, from every side that changed.
        for (change, isNew) in changes.inserted.map({ ($0, true) }) + changes.updated.map({ ($0, false) }) {
            let (entity, key) = try mapped(change)
            for (slot, destinations) in change.toMany {
                guard isNew || change.changedSlots.contains(slot), let toMany = entity.toMany[slot] else { continue }
                let keys = destinations.compactMap { self.key(of: $0) }
                // A new object has no join rows yet: nothing to remove, nothing to add.
                if isNew, keys.isEmpty { continue }
                try writeToMany(toMany, key: key, destinations: keys, connection: connection, schema: schema)
            }
        }
        try recordHistory(of: changes, tombstones: tombstones, connection: connection, schema: schema)
        return result
    }

    /// The column(s) of one slot's value, and their text: an attribute's value, a to-one's destination key (and its
    /// entity number where the destination has subentities).
    func columnTexts(_ value: StoredValue, slot: Int, entity: PostgreSQLEntity) throws -> [(String, String?)] {
        switch entity.slotColumns[slot] {
        case .attribute(let column, let type, let attribute)?:
            do {
                return [(column, try PostgreSQLValueCoding.text(value, type: type, attribute: attribute))]
            } catch let error as PostgreSQLValueCoding.UnstorableValue {
                throw Self.error(
                    NSManagedObjectValidationError,
                    """
                    The value of '\(attribute.name)' of an object of '\(entity.entity.name ?? "")' cannot be saved \
                    to PostgreSQL: \(error.reason)
                    """)
            }
        case .toOne(let column, let entityColumn, _)?:
            var destination: NSManagedObjectID?
            switch value {
            case .objectID(let id): destination = id
            case .object(let object): destination = object.objectID
            default: destination = nil
            }
            var texts = [(column, destination.flatMap { key(of: $0) }.map { String($0) })]
            if let entityColumn {
                texts.append(
                    (entityColumn, destination.flatMap { schema?.entity($0.entity) }.map { String($0.number) }))
            }
            return texts
        case nil:
            return []
        }
    }

    private func writeToMany(
        _ toMany: PostgreSQLToMany, key: Int64, destinations: [Int64], connection: PostgreSQLConnection,
        schema: PostgreSQLSchema
    ) throws {
        let list = "{" + destinations.map(String.init).joined(separator: ",") + "}"
        switch toMany {
        case .foreignKey(let table, _, let orderColumn?):
            // The destinations' own to-one keys are saved with them; an ordered relationship adds the positions.
            try connection.query(
                """
                UPDATE \(schema.qualified(table)) d SET \(quoted(orderColumn)) = p.position \
                FROM unnest($1::bigint[]) WITH ORDINALITY AS p(key, position) WHERE d."Z_PK" = p.key
                """, [list])
        case .foreignKey:
            break
        case .join(let table, let source, let destination, let orderColumn, _):
            try connection.query(
                """
                DELETE FROM \(schema.qualified(table)) WHERE \(quoted(source)) = $1::bigint \
                AND NOT (\(quoted(destination)) = ANY($2::bigint[]))
                """, [String(key), list])
            guard !destinations.isEmpty else { return }
            if let orderColumn {
                try connection.query(
                    """
                    INSERT INTO \(schema.qualified(table)) (\(quoted(source)), \(quoted(destination)), \
                    \(quoted(orderColumn))) SELECT $1::bigint, p.key, p.position \
                    FROM unnest($2::bigint[]) WITH ORDINALITY AS p(key, position) \
                    ON CONFLICT (\(joinKey(table, schema))) DO UPDATE SET \(quoted(orderColumn)) = EXCLUDED.\(quoted(orderColumn))
                    """, [String(key), list])
            } else {
                try connection.query(
                    """
                    INSERT INTO \(schema.qualified(table)) (\(quoted(source)), \(quoted(destination))) \
                    SELECT $1::bigint, p.key FROM unnest($2::bigint[]) AS p(key) \
                    ON CONFLICT (\(joinKey(table, schema))) DO NOTHING
                    """, [String(key), list])
            }
        }
    }

    /// The primary key columns of a join table.
    private func joinKey(_ table: String, _ schema: PostgreSQLSchema) -> String {
        guard let join = schema.joinTables.first(where: { $0.name == table }) else { return "" }
        return quoted(join.first) + ", " + quoted(join.second)
    }
}
