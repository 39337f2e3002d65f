import Foundation

/// Saving: one immediate transaction per save: deletions, insertions, updates (changed columns only, `Z_OPT` + 1),
/// many-to-many join rows, ordered-relationship positions and, if it changed, the metadata. Each update and deletion
/// names the version (`Z_OPT`) the saving context saw; if a row no longer has it, the transaction is rolled back and
/// the save fails with `StoreConflicts` listing every such row.
extension NSSQLiteStore {
    package func permanentIDs(for objects: [NSManagedObject]) throws -> [NSManagedObjectID] {
        try _checkWritable()
        let (connection, mapping) = try _openStore()
        // Each object's root table (found once per run of objects of one entity, compared by identity so as not to
        // retain and release it for every object), and how many keys each table needs.
        var tables: [(root: Int64, count: Int64, next: Int64)] = []
        var tableOfRoot: [Int64: Int] = [:]
        var tableOfObject: [Int] = []
        tableOfObject.reserveCapacity(objects.count)
        var last: (entity: ObjectIdentifier, table: Int)?
        for index in objects.indices {
            if let last, last.entity == ObjectIdentifier(objects[index]._entity) {
                tables[last.table].count += 1
                tableOfObject.append(last.table)
                continue
            }
            let entity = objects[index]._entity
            guard let mapped = mapping.entity(entity) else {
                throw coreDataError(
                    NSPersistentStoreSaveError,
                    "Entity '\(entity._name ?? "")' is not part of the configuration of the store at "
                        + "\(_url?.path ?? "(unknown)")")
            }
            let root = mapped.table.rootNumber
            let table = tableOfRoot[root] ?? tables.endIndex
            if table == tables.endIndex {
                tableOfRoot[root] = table
                tables.append((root, 0, 0))
            }
            tables[table].count += 1
            tableOfObject.append(table)
            last = (ObjectIdentifier(entity), table)
        }
        do {
            try connection.transaction(immediate: true) {
                let reserve = try connection.statement(
                    "UPDATE Z_PRIMARYKEY SET Z_MAX = IFNULL(Z_MAX, 0) + ? WHERE Z_ENT = ?")
                let read = try connection.statement("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?")
                for index in tables.indices.sorted(by: { tables[$0].root < tables[$1].root }) {
                    let (root, count, _) = tables[index]
                    try reserve.run([.integer(count), .integer(root)])
                    guard connection.changes == 1, let max = try read.scalarInteger([.integer(root)]) else {
                        throw coreDataError(
                            CocoaError.Code.fileReadCorruptFile.rawValue,
                            "The store at \(_url?.path ?? "(unknown)") has no Z_PRIMARYKEY row for entity \(root)")
                    }
                    read.reset()
                    tables[index].next = max - count + 1
                }
            }
        } catch let error as SQLiteError {
            throw error.coreDataError(url: _url, action: "assigning object IDs in")
        }
        var ids: [NSManagedObjectID] = []
        ids.reserveCapacity(objects.count)
        // The store's reference, looked up once: for each ID it took a lock and compared the store's identifier.
        let storeReference = _objectIDReference
        for index in objects.indices {
            let table = tableOfObject[index]
            let key = tables[table].next
            tables[table].next = key + 1
            ids.append(
                NSManagedObjectID(
                    entity: objects[index]._entity, storeReference: storeReference, reference: .primaryKey(key)))
        }
        return ids
    }

    package func save(_ changes: StoreSaveChanges) throws -> StoreSaveResult {
        try _checkWritable()
        let (connection, mapping) = try _openStore()
        // Prefetched to-many destinations may change with this save.
        _toManyCache = [:]
        var plist: Data?
        let generation = _metadataGeneration
        if let metadata = _metadata, _storedMetadataGeneration != generation {
            plist = try SQLiteStoreMetadata.encode(metadata)
        }
        var changes = changes
        do {
            let result: StoreSaveResult
            do {
                do {
                    // The first attempt writes without a savepoint: undoing one takes a statement journal, which
                    // SQLite fills with the original of every page the save changes (in a file, past 64 KiB), while
                    // conflicts are rare and the transaction's own rollback undoes as much.
                    result = try connection.transaction(immediate: true) {
                        try _write(changes, plist: plist, connection: connection, mapping: mapping)
                    }
                } catch is SQLiteVersionMismatch where changes.resolveConflicts != nil {
                    result = try _writeResolvingConflicts(
                        &changes, plist: plist, connection: connection, mapping: mapping)
                }
            } catch is SQLiteVersionMismatch {
                // Rolled back: now find every row that changed underneath the saving context, for its merge policy.
                throw StoreConflicts(try _conflicts(of: changes, connection: connection, mapping: mapping))
            }
            if plist != nil { _storedMetadataGeneration = generation }
            _rememberSaved(changes, result: result, mapping: mapping)
            return result
        } catch let conflicts as StoreConflicts {
            _rememberCurrentRows(of: conflicts)
            throw conflicts
        } catch let error as SQLiteError {
            throw error.coreDataError(url: _url, action: "saving to")
        }
    }

    /// Writes `changes` after a first attempt met rows changed underneath. In a new transaction, holding the write
    /// lock (so that the rows the merge policy reads cannot change again before its answer is written): finds the
    /// conflicts, lets the save's policy resolve them and writes its answer, each later attempt in a savepoint.
    /// Bounded all the same (a policy that keeps changes it was shown to conflict would otherwise loop): the eighth
    /// attempt's conflicts are thrown.
    private func _writeResolvingConflicts(
        _ changes: inout StoreSaveChanges, plist: Data?, connection: SQLiteConnection, mapping: SQLiteModelMapping
    ) throws -> StoreSaveResult {
        guard let resolve = changes.resolveConflicts else { throw SQLiteVersionMismatch() }
        return try connection.transaction(immediate: true) {
            var attempt = 1
            while true {
                let conflicts = StoreConflicts(try _conflicts(of: changes, connection: connection, mapping: mapping))
                _rememberCurrentRows(of: conflicts)
                changes = try resolve(conflicts)
                changes.resolveConflicts = resolve
                attempt += 1
                guard attempt < 8 else {
                    return try _write(changes, plist: plist, connection: connection, mapping: mapping)
                }
                try connection.execute("SAVEPOINT save_attempt")
                do {
                    let result = try _write(changes, plist: plist, connection: connection, mapping: mapping)
                    try connection.execute("RELEASE save_attempt")
                    return result
                } catch is SQLiteVersionMismatch {
                    try connection.execute("ROLLBACK TO save_attempt")
                    try connection.execute("RELEASE save_attempt")
                }
            }
        }
    }

    /// Writes one save's rows and, when the store records it, its history transaction.
    private func _write(
        _ changes: StoreSaveChanges, plist: Data?, connection: SQLiteConnection, mapping: SQLiteModelMapping
    ) throws -> StoreSaveResult {
        guard let history = _history else {
            return try _save(changes, plist: plist, connection: connection, mapping: mapping)
        }
        // Tombstones are read before their rows go; the transaction is recorded with the rows.
        let tombstones =
            history.tombstoneColumns > 0 && !changes.deleted.isEmpty
            ? try history.tombstones(of: _deletedRows(of: changes, mapping: mapping), connection: connection)
            : [:]
        let result = try _save(changes, plist: plist, connection: connection, mapping: mapping)
        try history.record(
            _historyChanges(of: changes, tombstones: tombstones, history: history, mapping: mapping),
            author: changes.author, connection: connection)
        return result
    }

    /// Writes one save's rows inside its transaction. Updates and deletions name the version the saving context saw
    /// (updates `WHERE Z_PK = ? AND Z_OPT = ?`, as Core Data writes them; deletions the same, or 64 keys of one
    /// version to a statement), so a row changed underneath it is left alone and the save throws
    /// `SQLiteVersionMismatch`, which rolls everything back.
    private func _save(
        _ changes: StoreSaveChanges, plist: Data?, connection: SQLiteConnection, mapping: SQLiteModelMapping
    ) throws -> StoreSaveResult {
        // Forced changes (a merge policy chose to overwrite) write the version after the store's, whatever it is.
        // (Read in place: filtering the changes themselves copied, and retained, every one of them.)
        var forced: [NSManagedObjectID] = []
        for list in [changes.updated, changes.deleted] {
            for index in list.indices where list[index].forced { forced.append(list[index].objectID) }
        }
        let current = forced.isEmpty ? [:] : try _storedVersions(of: forced, connection: connection, mapping: mapping)

        var result = StoreSaveResult()
        // 1. Deletions, first, so that an insertion may take a deleted object's unique values; then the join rows
        // that refer to the deleted rows, one statement per join column. Runs of rows of one table (and, when
        // checked, of one version) go by key ranges and batches, one statement each: a statement deleting fewer
        // rows than it names met a row changed or deleted underneath the saving context.
        var joinKeys: [String: (column: (table: String, column: String), keys: [Int64])] = [:]
        let deletions = try _inKeyOrder(changes.deleted, mapping: mapping)
        var start = 0
        while start < deletions.count {
            let table = deletions[start].entity.table
            // (The fields read, not the changes copied: a copy retains and releases each of their references.)
            let forced = changes.deleted[deletions[start].index].forced
            let expectedVersion = changes.deleted[deletions[start].index].expectedVersion
            var end = start + 1
            while end < deletions.count, deletions[end].entity.table === table {
                let next = deletions[end].index
                guard changes.deleted[next].forced == forced,
                    forced || changes.deleted[next].expectedVersion == expectedVersion
                else { break }
                end += 1
            }
            try _delete(
                deletions[start..<end], from: table, checking: forced ? nil : expectedVersion, connection: connection)
            for column in mapping.joinColumns(holdingKeysOf: table) {
                joinKeys["\(column.table).\(column.column)", default: (column, [])].keys
                    .append(contentsOf: deletions[start..<end].lazy.map(\.key))
            }
            start = end
        }
        for (_, group) in joinKeys.sorted(by: { $0.key < $1.key }) {
            try connection.statement(
                "DELETE FROM \(group.column.table) WHERE \(group.column.column) IN \(SQLiteTable.boundKeys)"
            ).run([SQLiteTable.keyList(group.keys)])
        }
        // 2. Insertions (the statement of the entity of the previous row is usually the one wanted again).
        var previous: (entity: SQLiteEntityMapping, plan: SQLiteInsertPlan, statement: SQLiteStatement)?
        // (Read in place, through the buffer: iterating the array copied every change, retaining its references.)
        try changes.inserted.withUnsafeBufferPointer { inserted in
            for index in inserted.indices {
                let objectID = inserted[index].objectID
                let (entity, key) = try _locate(objectID, mapping: mapping)
                if let previous, previous.entity === entity {
                    previous.statement.rewind()
                    if SQLiteStatementLog.isRecording { SQLiteStatementLog.record(previous.plan.sql) }
                } else {
                    let plan = _insertPlan(for: entity, mapping: mapping)
                    previous = (entity, plan, try connection.statement(plan.sql))
                }
                let (_, plan, statement) = previous!
                statement.bind(key, at: 1)
                statement.bind(entity.number, at: 2)
                statement.bind(Int64(1), at: 3)
                try _bindColumns(
                    plan.columns, plan.writes, of: inserted.baseAddress! + index, to: statement, from: 4,
                    mapping: mapping)
                while try statement.step() {}
            }
        }
        // 3. Updates: the changed columns, and a new version even when only to-many relationships changed.
        var previousUpdate: SQLitePreparedUpdate?
        // The change is read where it lies in the list, and the statement and plan through the prepared update that
        // holds them: passed by value or copied to locals, each was a retain and a release for every updated row.
        func update(_ change: UnsafePointer<StoreSaveObject>, entity: SQLiteEntityMapping, key: Int64) throws {
            let checked = !change.pointee.forced
            let prepared: SQLitePreparedUpdate
            if let previous = previousUpdate, previous.entity === entity, previous.checked == checked,
                previous.slots == change.pointee.changedSlots
            {
                prepared = previous
                prepared.statement.rewind()
                if SQLiteStatementLog.isRecording { SQLiteStatementLog.record(prepared.plan.sql) }
            } else {
                let slots = change.pointee.changedSlots
                let plan = _updatePlan(for: entity, slots: slots, checked: checked, mapping: mapping)
                prepared = SQLitePreparedUpdate(
                    entity: entity, slots: slots, checked: checked, plan: plan,
                    statement: try connection.statement(plan.sql))
                previousUpdate = prepared
            }
            let expected = change.pointee.expectedVersion
            let version = (checked ? expected : current[change.pointee.objectID] ?? expected) + 1
            let statement = prepared.statement
            statement.bind(version, at: 1)
            try _bindColumns(
                prepared.plan.columns, prepared.plan.writes, of: change, to: statement, from: 2, mapping: mapping)
            let count = Int32(prepared.plan.writes.count)
            statement.bind(key, at: count + 2)
            if checked { statement.bind(expected, at: count + 3) }
            while try statement.step() {}
            if checked, connection.changes != 1 { throw SQLiteVersionMismatch() }
            if version != expected + 1 { result.versions[change.pointee.objectID] = version }
        }
        let updates = try _inKeyOrder(changes.updated, mapping: mapping)
        try changes.updated.withUnsafeBufferPointer { updated in
            try updates.withUnsafeBufferPointer { updates in
                guard let first = updated.baseAddress else { return }
                for position in updates.indices {
                    // (The list holds the entity mappings; the model mapping holds them all.)
                    unowned(unsafe) let entity = updates[position].entity
                    try update(first + updates[position].index, entity: entity, key: updates[position].key)
                }
            }
        }
        // 4. To-many relationships: join rows and ordered positions.
        for (changes, inserted) in [(changes.inserted, true), (changes.updated, false)] {
            try changes.withUnsafeBufferPointer { changes in
                for index in changes.indices where !changes[index].toMany.isEmpty {
                    try _writeToMany(changes[index], isNew: inserted, connection: connection, mapping: mapping)
                }
            }
        }
        // 5. Metadata.
        if let plist, let metadata = _metadata {
            try SQLiteStoreMetadata.write(metadata, plist: plist, to: connection)
        }
        return result
    }

    /// Deletes rows of one table, in key order: each run of consecutive keys with one statement over the range,
    /// the other keys `deleteBatchSize` to a statement, the rest one by one. With `version`, only rows that still
    /// have it; if any has not, throws `SQLiteVersionMismatch`.
    private func _delete(
        _ rows: ArraySlice<(index: Int, entity: SQLiteEntityMapping, key: Int64)>, from table: SQLiteTable,
        checking version: Int64?, connection: SQLiteConnection
    ) throws {
        var scattered: [Int64] = []
        var start = rows.startIndex
        while start < rows.endIndex {
            var end = start + 1
            while end < rows.endIndex, rows[end - 1].key < Int64.max, rows[end].key == rows[end - 1].key + 1 {
                end += 1
            }
            if end - start >= SQLiteTable.deleteRangeMinimum {
                // Every key of the range is one of these rows, so the statement can delete no other.
                let statement = try connection.statement(
                    version == nil ? table.deleteRangeSQL : table.deleteCheckedRangeSQL)
                var parameter: Int32 = 1
                if let version {
                    statement.bind(version, at: parameter)
                    parameter += 1
                }
                statement.bind(rows[start].key, at: parameter)
                statement.bind(rows[end - 1].key, at: parameter + 1)
                while try statement.step() {}
                if version != nil, connection.changes != end - start { throw SQLiteVersionMismatch() }
            } else {
                for row in rows[start..<end] {
                    scattered.append(row.key)
                    if scattered.count == SQLiteTable.deleteBatchSize {
                        try _deleteBatch(scattered, from: table, checking: version, connection: connection)
                        scattered.removeAll(keepingCapacity: true)
                    }
                }
            }
            start = end
        }
        guard !scattered.isEmpty else { return }
        let statement = try connection.statement(version == nil ? table.deleteSQL : table.deleteCheckedSQL)
        for (offset, key) in scattered.enumerated() {
            if offset > 0 {
                statement.rewind()
                if SQLiteStatementLog.isRecording { SQLiteStatementLog.record(statement.sql) }
            }
            statement.bind(key, at: 1)
            if let version { statement.bind(version, at: 2) }
            while try statement.step() {}
            if version != nil, connection.changes != 1 { throw SQLiteVersionMismatch() }
        }
    }

    /// Deletes `deleteBatchSize` rows of one table with one statement.
    private func _deleteBatch(
        _ keys: [Int64], from table: SQLiteTable, checking version: Int64?, connection: SQLiteConnection
    ) throws {
        let statement = try connection.statement(version == nil ? table.deleteBatchSQL : table.deleteCheckedBatchSQL)
        var parameter: Int32 = 1
        if let version {
            statement.bind(version, at: parameter)
            parameter += 1
        }
        for key in keys {
            statement.bind(key, at: parameter)
            parameter += 1
        }
        while try statement.step() {}
        if version != nil, connection.changes != keys.count { throw SQLiteVersionMismatch() }
    }

    /// After a save, the saved rows become the row cache's snapshots (transient values left out) and deleted rows
    /// leave it.
    private func _rememberSaved(
        _ changes: StoreSaveChanges, result: StoreSaveResult, mapping: SQLiteModelMapping
    ) {
        // Straight into the row cache, as `_remember(_:)` keeps fetched rows (a list of rows first was a copy and a
        // release of every saved object's ID and values more).
        let cached = _makeRoomInRowCache(for: changes.inserted.count + changes.updated.count)
        let now = ProcessInfo.processInfo.systemUptime
        for (list, inserted) in [(changes.inserted, true), (changes.updated, false)] where cached {
            // (Read in place: concatenating or iterating the changes copied each one, retaining its references.)
            list.withUnsafeBufferPointer { list in
                for index in list.indices {
                    let version =
                        inserted
                        ? result.version(ofInserted: list[index].objectID)
                        : result.version(ofUpdated: list[index].objectID, expected: list[index].expectedVersion)
                    guard let entity = mapping.entity(list[index].objectID._entity), !list[index].values.isEmpty
                    else { continue }
                    // A copy for an entity with unstored or to-many slots, shared with no object: only the saved
                    // object's going away forgets it, which is why a saved object always asks (`Flags.savedHere`).
                    var values = list[index].values
                    for slot in entity.unstoredSlots where slot < values.count { values[slot] = .null }
                    for slot in entity.decodePlan.toManySlots where slot < values.count { values[slot] = .toManyFault }
                    _snapshots[list[index].objectID] = SQLiteSnapshot(values: values, version: version, time: now)
                }
            }
        }
        // Saved rows not kept must not leave their earlier snapshots behind, whose values are no longer the store's.
        if !cached, !_snapshots.isEmpty {
            for index in changes.updated.indices { _snapshots[changes.updated[index].objectID] = nil }
        }
        for index in changes.deleted.indices { _snapshots[changes.deleted[index].objectID] = nil }
        // Counts kept by triggers changed in SQLite, not in the saved values: forget the rows that hold them.
        guard !mapping.derivedCounts.isEmpty else { return }
        let touched = Set(
            (changes.inserted + changes.updated + changes.deleted).compactMap {
                mapping.entity($0.objectID._entity)?.table.name
            })
        let stale = Set(
            mapping.derivedCounts.filter { touched.contains($0.destinationTable) || touched.contains($0.sourceTable) }
                .map(\.sourceTable))
        if !stale.isEmpty {
            for (objectID, _) in _snapshots where stale.contains(mapping.entity(objectID._entity)?.table.name ?? "") {
                _snapshots[objectID] = nil
            }
        }
    }

    /// The join rows and ordered positions of one saved object's to-many relationships.
    private func _writeToMany(
        _ change: StoreSaveObject, isNew: Bool, connection: SQLiteConnection, mapping: SQLiteModelMapping
    ) throws {
        let (entity, key) = try _locate(change.objectID, mapping: mapping)
        for (slot, destinations) in change.toMany.sorted(by: { $0.key < $1.key }) where slot < entity.slots.count {
            guard case .toMany(let storage, let relationship) = entity.slots[slot] else { continue }
            let keys = try destinations.map { try _key(of: $0, from: change.objectID, relationship: relationship) }
            switch storage {
            case .foreignKey(let table, _, let order?):
                let statement = try connection.statement("UPDATE \(table.name) SET \(order) = ? WHERE Z_PK = ?")
                for (position, destination) in keys.enumerated() {
                    try statement.run([.integer(Int64(position + 1)), .integer(destination)])
                }
            case .foreignKey:
                break
            case .join(let join):
                try _writeJoin(join, source: key, destinations: keys, isNew: isNew, connection: connection)
            }
        }
    }

    /// Makes the join rows of `source` those of `destinations` (and their positions, if ordered).
    private func _writeJoin(
        _ join: SQLiteJoin, source: Int64, destinations: [Int64], isNew: Bool, connection: SQLiteConnection
    ) throws {
        var existing = Set<Int64>()
        if !isNew {
            let statement = try connection.statement(
                "SELECT \(join.destinationColumn) FROM \(join.table) WHERE \(join.sourceColumn) = ?")
            statement.bind(source, at: 1)
            while try statement.step() { existing.insert(statement.int64(0)) }
            statement.reset()
        }
        let wanted = Set(destinations)
        let delete = try connection.statement(
            "DELETE FROM \(join.table) WHERE \(join.sourceColumn) = ? AND \(join.destinationColumn) = ?")
        for destination in existing.subtracting(wanted).sorted() {
            try delete.run([.integer(source), .integer(destination)])
        }
        let insert = try connection.statement(
            "INSERT OR IGNORE INTO \(join.table) (\(join.sourceColumn), \(join.destinationColumn)) VALUES (?, ?)")
        for destination in destinations where !existing.contains(destination) {
            try insert.run([.integer(source), .integer(destination)])
        }
        if let order = join.orderColumn {
            let update = try connection.statement(
                "UPDATE \(join.table) SET \(order) = ? WHERE \(join.sourceColumn) = ? AND \(join.destinationColumn) = ?"
            )
            for (position, destination) in destinations.enumerated() {
                try update.run([.integer(Int64(position + 1)), .integer(source), .integer(destination)])
            }
        }
    }

    /// The positions of the changes with their tables and keys, table by table in key order: the order of the rows
    /// in the file, so that a save touches each page once. (In the context's hash order, a large save dirtied pages
    /// all over the file and spilled SQLite's page cache, reading and writing the same pages again and again.)
    private func _inKeyOrder(_ changes: [StoreSaveObject], mapping: SQLiteModelMapping) throws
        -> [(index: Int, entity: SQLiteEntityMapping, key: Int64)]
    {
        // Positions in `changes`, sorted as plain numbers (no references, which every step of the sort would retain
        // and release): sorting or gathering the changes themselves cost more than the statements it orders.
        var entities: [SQLiteEntityMapping] = []
        var order: [(table: Int64, key: Int64, index: Int)] = []
        entities.reserveCapacity(changes.count)
        order.reserveCapacity(changes.count)
        var sorted = true
        for index in changes.indices {
            let (entity, key) = try _locate(changes[index].objectID, mapping: mapping)
            let position = (table: entity.table.rootNumber, key: key, index: index)
            if let last = order.last, (last.table, last.key) > (position.table, position.key) { sorted = false }
            entities.append(entity)
            order.append(position)
        }
        // Insertions mostly come in key order already (keys are handed out in the order objects were made).
        if !sorted { order.sort { ($0.table, $0.key) < ($1.table, $1.key) } }
        return order.map { ($0.index, entities[$0.index], $0.key) }
    }

    // MARK: Values

    /// The entity mapping and primary key of an object of this store.
    func _locate(_ objectID: NSManagedObjectID, mapping: SQLiteModelMapping) throws
        -> (SQLiteEntityMapping, Int64)
    {
        guard objectID._isInStore(self), let key = objectID._primaryKey, let entity = mapping.entity(objectID._entity)
        else {
            throw coreDataError(
                NSPersistentStoreSaveError,
                "The object \(objectID.uriRepresentation().absoluteString) does not belong to the store at "
                    + "\(_url?.path ?? "(unknown)")")
        }
        return (entity, key)
    }

    /// The primary key of a relationship's destination, which must be saved in this store.
    private func _key(
        of destination: NSManagedObjectID, from source: NSManagedObjectID,
        relationship: @autoclosure () -> NSRelationshipDescription
    ) throws -> Int64 {
        guard destination._isInStore(self), let key = destination._primaryKey else {
            throw coreDataError(
                NSManagedObjectExternalRelationshipError,
                """
                Relationship '\(relationship()._name)' of \(source.uriRepresentation().absoluteString) points to \
                \(destination.uriRepresentation().absoluteString), which is not in the same store; relationships \
                cannot cross stores
                """)
        }
        return key
    }

    /// Binds the column values of a plan's writes for `change`, the first at placeholder `first`; the common
    /// attribute types go straight from the stored value to `sqlite3_bind_*`.
    @inline(__always)
    private func _bindColumns(
        _ columns: [SQLiteColumnWrite], _ writes: [SQLiteWrite], of change: UnsafePointer<StoreSaveObject>,
        to statement: SQLiteStatement, from first: Int32, mapping: SQLiteModelMapping
    ) throws {
        // (The change read where it lies, and its values in place, not copied to a local: a copy is a retain and a
        // release of each reference, per change.)
        for offset in columns.indices {
            let column = columns[offset]
            let index = first + Int32(offset)
            if column.slot >= 0, column.slot < change.pointee.values.count,
                SQLiteValueCoding.bindDirectly(
                    change.pointee.values[column.slot], type: column.type, to: statement, at: index)
            {
                continue
            }
            statement.bind(try _value(writes[offset], of: change.pointee, mapping: mapping), at: index)
        }
    }

    private func _value(_ write: SQLiteWrite, of change: StoreSaveObject, mapping: SQLiteModelMapping) throws
        -> SQLiteValue
    {
        switch write {
        case .attribute(let slot, let type, let attribute):
            guard slot < change.values.count else { return .null }
            return try _storable(change.values[slot], type: type, attribute: attribute, of: change.object)
        case .derived(_, let type, let attribute):
            // A derivation naming a key the entity lacks fails the save (inside its transaction) rather than stop.
            let value = try PredicateFunctionDispatch.throwingEvaluationFailures(
                "Deriving '\(attribute._name)' of entity '\(change.object._entity._name ?? "")'"
            ) { attribute._derivationExpression?.expressionValue(with: change.object, context: nil) }
            let stored = StoredValue.attributeValue(value, type: type) ?? .null
            return try _storable(stored, type: type, attribute: attribute, of: change.object)
        case .foreignKey(let slot), .foreignEntity(let slot):
            guard slot < change.values.count else { return .null }
            let destination: NSManagedObjectID
            switch change.values[slot] {
            case .objectID(let id): destination = id
            case .object(let object): destination = object.objectID
            default: return .null
            }
            let key = try _key(
                of: destination, from: change.objectID,
                relationship: change.object._layout.slots[slot].property as! NSRelationshipDescription)
            if case .foreignEntity = write {
                return mapping.entity(destination._entity).map { .integer($0.number) } ?? .null
            }
            return .integer(key)
        }
    }

    /// The column value of `value`; one the column would give back as something else (NaN, a decimal with more
    /// precision than SQLite keeps) is refused as Core Data refuses an invalid value, with the object and the key.
    private func _storable(
        _ value: StoredValue, type: NSAttributeType, attribute: NSAttributeDescription, of object: NSManagedObject
    ) throws -> SQLiteValue {
        do {
            return try SQLiteValueCoding.sqliteValue(value, type: type, attribute: attribute)
        } catch let unstorable as SQLiteValueCoding.UnstorableValue {
            // Foundation traps when it describes a date of NaN seconds, and errors get described.
            var shown = value.publicValue
            if let date = shown as? Date, date.timeIntervalSinceReferenceDate.isNaN { shown = nil }
            throw object._validationError(
                NSManagedObjectValidationError, property: attribute, value: shown,
                message: """
                    The value of \(attribute._name) of \(object._entity._name ?? "an entity") cannot be saved to the \
                    SQLite store at \(_url?.path ?? "(unknown)"): \(unstorable.reason).
                    """)
        }
    }

    /// The UPDATE of the columns of `slots` (and of derived attributes) of `entity`'s rows, cached per entity and
    /// set of slots: its SQL and the writes bound after `Z_OPT` (the primary key, then — if `checked` — the expected
    /// version come last).
    func _updatePlan(for entity: SQLiteEntityMapping, slots: SlotSet, checked: Bool, mapping: SQLiteModelMapping)
        -> SQLiteUpdatePlan
    {
        let key = SQLiteUpdateKey(entity: entity.number, slots: slots, checked: checked)
        if let plan = _updatePlans[key] { return plan }
        let insert = _insertPlan(for: entity, mapping: mapping)
        var columns: [(name: String, write: SQLiteWrite)] = []
        for slot in slots.elements {
            columns += insert.columnsBySlot[slot] ?? []
        }
        columns += insert.derived
        let assignments = (["Z_OPT = ?"] + columns.map { "\($0.name) = ?" }).joined(separator: ", ")
        let condition = checked ? "Z_PK = ? AND Z_OPT = ?" : "Z_PK = ?"
        let plan = SQLiteUpdatePlan(
            sql: "UPDATE \(entity.table.name) SET \(assignments) WHERE \(condition)", writes: columns.map(\.write))
        if _updatePlans.count > 1_000 { _updatePlans.removeAll() }
        _updatePlans[key] = plan
        return plan
    }

    /// The INSERT of `entity`'s rows (cached per entity).
    func _insertPlan(for entity: SQLiteEntityMapping, mapping: SQLiteModelMapping) -> SQLiteInsertPlan {
        if let plan = _insertPlans[entity.number] { return plan }
        var writes: [(name: String, write: SQLiteWrite)] = []
        var bySlot: [Int: [(name: String, write: SQLiteWrite)]] = [:]
        var derived: [(name: String, write: SQLiteWrite)] = []
        let columns = entity.table.columns
        for (slot, storage) in entity.slots.enumerated() {
            switch storage {
            case .attribute(let column, let type, let attribute):
                let write = (columns[column].name, SQLiteWrite.attribute(slot: slot, type: type, attribute: attribute))
                writes.append(write)
                bySlot[slot] = [write]
            case .derived(let column, let type, let attribute):
                let keptByTriggers = mapping.derivedCounts.contains {
                    $0.attributeName == attribute._name && $0.entityName == attribute._entity?._name
                }
                guard !keptByTriggers, let derivedAttribute = attribute as? NSDerivedAttributeDescription else {
                    continue
                }
                let write = (
                    columns[column].name, SQLiteWrite.derived(slot: slot, type: type, attribute: derivedAttribute)
                )
                writes.append(write)
                derived.append(write)
            case .toOne(let foreignKey, let entityColumn, _):
                var slotWrites = [(columns[foreignKey].name, SQLiteWrite.foreignKey(slot: slot))]
                if let entityColumn { slotWrites.append((columns[entityColumn].name, .foreignEntity(slot: slot))) }
                writes += slotWrites
                bySlot[slot] = slotWrites
            case .toMany, .none:
                continue
            }
        }
        let names = ["Z_PK", "Z_ENT", "Z_OPT"] + writes.map(\.name)
        let sql =
            "INSERT INTO \(entity.table.name) (\(names.joined(separator: ", "))) VALUES "
            + "(\(Array(repeating: "?", count: names.count).joined(separator: ", ")))"
        let plan = SQLiteInsertPlan(sql: sql, writes: writes.map(\.write), columnsBySlot: bySlot, derived: derived)
        _insertPlans[entity.number] = plan
        return plan
    }

    func _checkWritable() throws {
        if isReadOnly, _readOnlyForHistory {
            throw coreDataError(
                NSPersistentStoreSaveError,
                """
                The SQLite store at \(_url?.path ?? "(unknown)") records persistent history, so it was opened \
                read-only when added without NSPersistentHistoryTrackingKey (as Apple's framework opens it); add it \
                with NSPersistentHistoryTrackingKey set to true to change it
                """,
                userInfo: _url.map { [NSURLErrorKey: $0] } ?? [:])
        }
        guard !isReadOnly else {
            throw coreDataError(
                NSPersistentStoreSaveError,
                "The SQLite store at \(_url?.path ?? "(unknown)") was added read-only (NSReadOnlyPersistentStoreOption)",
                userInfo: _url.map { [NSURLErrorKey: $0] } ?? [:])
        }
    }
}
