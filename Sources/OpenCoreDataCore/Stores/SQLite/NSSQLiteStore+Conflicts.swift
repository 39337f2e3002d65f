import Foundation

/// Optimistic locking in the SQLite store: finding the rows a save expected at another version, for the saving
/// context's merge policy.
extension NSSQLiteStore {
    /// The store's current rows of conflicting objects become the row cache's snapshots, so that refreshing sees
    /// them.
    func _rememberCurrentRows(of conflicts: StoreConflicts) {
        for conflict in conflicts.conflicts {
            if let row = conflict.current { _remember([row]) } else { _snapshots[conflict.objectID] = nil }
        }
    }

    /// The store's versions (`Z_OPT`) of the rows of `objectIDs`, one query per table; rows it no longer has are
    /// missing.
    func _storedVersions(
        of objectIDs: [NSManagedObjectID], connection: SQLiteConnection, mapping: SQLiteModelMapping
    ) throws -> ObjectIDDictionary<Int64> {
        var byTable: [ObjectIdentifier: (table: SQLiteTable, keys: [Int64: NSManagedObjectID])] = [:]
        for objectID in objectIDs {
            let (entity, key) = try _locate(objectID, mapping: mapping)
            byTable[ObjectIdentifier(entity.table), default: (entity.table, [:])].keys[key] = objectID
        }
        var versions: ObjectIDDictionary<Int64> = [:]
        for (_, group) in byTable {
            let statement = try connection.statement(group.table.selectVersionsSQL)
            statement.bind(SQLiteTable.keyList(group.keys.keys), at: 1)
            while try statement.step() {
                if let objectID = group.keys[statement.int64(0)] { versions[objectID] = statement.int64(1) }
            }
            statement.reset()
        }
        return versions
    }

    /// The rows of an updating or deleting save whose version in the store is not the one the saving context saw
    /// (changed or deleted by someone else), with their current values. Forced changes never conflict.
    func _conflicts(
        of changes: StoreSaveChanges, connection: SQLiteConnection, mapping: SQLiteModelMapping
    ) throws -> [StoreConflict] {
        let checked = [changes.updated, changes.deleted].joined().filter { !$0.forced }
        let stored = try _storedVersions(of: checked.map(\.objectID), connection: connection, mapping: mapping)
        var conflicts: [StoreConflict] = []
        for change in checked {
            let version = stored[change.objectID]
            guard version != change.expectedVersion else { continue }
            let row = version == nil ? nil : try row(for: change.objectID)
            conflicts.append(
                StoreConflict(objectID: change.objectID, current: row, expectedVersion: change.expectedVersion))
        }
        return conflicts
    }
}
