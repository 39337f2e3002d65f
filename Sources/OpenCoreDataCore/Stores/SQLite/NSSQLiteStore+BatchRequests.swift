import Foundation

/// Batch requests in SQL, each in one immediate transaction:
///
/// - An update is one `UPDATE … SET Z_OPT = Z_OPT + 1, … WHERE <predicate>` (preceded by a `SELECT` of the keys when
///   their IDs are asked for).
/// - A deletion selects the keys of the rows to delete, follows cascading relationships to the keys of their
///   destinations (one query per relationship and round), checks deny rules, nullifies the foreign keys that point at
///   the deleted rows from rows that stay (raising their versions), and deletes the rows and their join rows — each a
///   statement over all the keys of a table at once. Without relationships to follow and IDs to return, it is one
///   `DELETE … WHERE <predicate>`.
/// - An insertion reserves keys past `Z_PRIMARYKEY.Z_MAX` and runs the entity's prepared `INSERT` once per object.
///
/// Rows the row cache holds from before are dropped, so that refreshed objects read the new values.
extension NSSQLiteStore: PersistentStoreBatchExecuting {
    package func executeBatchUpdate(_ update: StoreBatchUpdate) throws -> StoreBatchOutcome {
        try _checkWritable()
        let (connection, mapping) = try _openStore()
        guard let entity = mapping.entity(update.entity) else { return StoreBatchOutcome() }
        do {
            let plan = try SQLiteQueryGenerator(mapping: mapping, store: self).batchUpdate(update, entity: entity)
            let history = _history
            let keys =
                update.wantsObjectIDs || history != nil
                ? try SQLiteQueryGenerator(mapping: mapping, store: self).batchKeys(
                    update.predicate, includesSubentities: update.includesSubentities, entity: entity) : nil
            let outcome: StoreBatchOutcome = try connection.transaction(immediate: true) {
                var outcome = StoreBatchOutcome()
                var rows: [(key: Int64, entity: Int64)] = []
                if let keys {
                    let statement = try connection.statement(keys.sql)
                    statement.bind(keys.arguments)
                    while try statement.step() { rows.append((statement.int64(0), statement.int64(1))) }
                    statement.reset()
                }
                if update.wantsObjectIDs {
                    var references = SQLiteDestinationIDCache()
                    outcome.objectIDs = rows.compactMap { row in
                        mapping.entity(number: row.entity).map {
                            references.rowID(entity: $0.entity, key: row.key, store: self)
                        }
                    }
                }
                try connection.statement(plan.sql).run(plan.arguments)
                outcome.count = connection.changes
                if let history {
                    let names = update.assignments.map(\.attribute._name)
                    var bitmaps: [Int64: Data] = [:]
                    let changes = rows.compactMap { row -> SQLiteHistoryChange? in
                        guard let member = mapping.entity(number: row.entity) else { return nil }
                        if bitmaps[row.entity] == nil {
                            bitmaps[row.entity] = history.columnsBitmap(of: names, entity: member.entity)
                        }
                        return SQLiteHistoryChange(
                            type: .update, entity: row.entity, key: row.key, columns: bitmaps[row.entity])
                    }
                    try history.record(changes, author: update.author, connection: connection)
                }
                return outcome
            }
            _forgetRows(of: [entity.table], mapping: mapping)
            return outcome
        } catch let untranslatable as SQLiteUntranslatable {
            throw _untranslatable(untranslatable, request: "batch update", entity: update.entity)
        } catch let error as SQLiteError {
            throw error.coreDataError(url: _url, action: "updating in")
        }
    }

    package func executeBatchInsert(_ insert: StoreBatchInsert) throws -> StoreBatchOutcome {
        try _checkWritable()
        let (connection, mapping) = try _openStore()
        guard let entity = mapping.entity(insert.entity) else {
            throw coreDataError(
                NSPersistentStoreSaveError,
                "Entity '\(insert.entity._name ?? "")' is not part of the configuration of the store at "
                    + "\(_url?.path ?? "(unknown)")")
        }
        let root = entity.table.rootNumber
        let plan = _insertPlan(for: entity, mapping: mapping)
        do {
            let outcome: StoreBatchOutcome = try connection.transaction(immediate: true) {
                // Keys follow the largest one handed out: inside the transaction no other writer can take them.
                guard
                    let max = try connection.statement("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?")
                        .scalarInteger([.integer(root)])
                else {
                    throw coreDataError(
                        CocoaError.Code.fileReadCorruptFile.rawValue,
                        "The store at \(_url?.path ?? "(unknown)") has no Z_PRIMARYKEY row for entity \(root)")
                }
                var key = max
                var outcome = StoreBatchOutcome()
                let history = _history
                let statement = try connection.statement(plan.sql)
                var references = SQLiteDestinationIDCache()
                while let values = try insert.next() {
                    key += 1
                    if outcome.count > 0 {
                        statement.rewind()
                        if SQLiteStatementLog.isRecording { SQLiteStatementLog.record(plan.sql) }
                    }
                    statement.bind(key, at: 1)
                    statement.bind(entity.number, at: 2)
                    statement.bind(Int64(1), at: 3)
                    try _bindBatchColumns(plan, values: values, to: statement, entity: entity)
                    while try statement.step() {}
                    outcome.count += 1
                    if insert.wantsObjectIDs {
                        outcome.objectIDs.append(references.rowID(entity: entity.entity, key: key, store: self))
                    }
                }
                try connection.statement("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?").run([
                    .integer(key), .integer(root),
                ])
                if let history, key > max {
                    let changes = (max + 1...key).map {
                        SQLiteHistoryChange(type: .insert, entity: entity.number, key: $0)
                    }
                    try history.record(changes, author: insert.author, connection: connection)
                }
                return outcome
            }
            _forgetDerivedCounts(mapping: mapping)
            return outcome
        } catch let error as SQLiteError {
            throw error.coreDataError(url: _url, action: "inserting into")
        }
    }

    /// Binds a batch-inserted object's column values, after `Z_PK`, `Z_ENT` and `Z_OPT`: attributes as a save binds
    /// them, derived attributes computed from the others, relationships empty.
    private func _bindBatchColumns(
        _ plan: SQLiteInsertPlan, values: StoredValues, to statement: SQLiteStatement, entity: SQLiteEntityMapping
    ) throws {
        var attributes: [String: Any]?
        for (offset, write) in plan.writes.enumerated() {
            let index = Int32(offset + 4)
            switch write {
            case .attribute(let slot, let type, let attribute):
                let value = slot < values.count ? values[slot] : .null
                if SQLiteValueCoding.bindDirectly(value, type: type, to: statement, at: index) { continue }
                statement.bind(try SQLiteValueCoding.sqliteValue(value, type: type, attribute: attribute), at: index)
            case .derived(_, let type, let attribute):
                if attributes == nil {
                    var byName: [String: Any] = [:]
                    for (slot, storage) in entity.slots.enumerated() where slot < values.count {
                        if case .attribute(_, _, let source) = storage, let value = values[slot].publicValue {
                            byName[source._name] = value
                        }
                    }
                    attributes = byName
                }
                let value = try PredicateFunctionDispatch.throwingEvaluationFailures(
                    "Deriving '\(attribute._name)' of entity '\(entity.name)'"
                ) { attribute._derivationExpression?.expressionValue(with: attributes, context: nil) }
                let stored = StoredValue.attributeValue(value, type: type) ?? .null
                statement.bind(try SQLiteValueCoding.sqliteValue(stored, type: type, attribute: attribute), at: index)
            case .foreignKey, .foreignEntity:
                statement.bind(.null, at: index)
            }
        }
    }

    // MARK: Deleting

    package func executeBatchDelete(_ delete: StoreBatchDelete) throws -> StoreBatchOutcome {
        try _checkWritable()
        let (connection, mapping) = try _openStore()
        guard let requested = delete.request.entity, let entity = mapping.entity(requested) else {
            return StoreBatchOutcome()
        }
        let request = delete.request
        var deletedWithoutKeys = false
        do {
            let outcome: StoreBatchOutcome = try connection.transaction(immediate: true) {
                // 1. The rows to delete, by entity.
                var doomed = SQLiteDoomedRows()
                if let objectIDs = delete.objectIDs {
                    // Only rows that still exist, with the entity their row says.
                    var keys: [Int64] = []
                    for objectID in objectIDs {
                        if let key = objectID._primaryKey, mapping.entity(objectID._entity)?.table === entity.table {
                            keys.append(key)
                        }
                    }
                    let statement = try connection.statement(
                        "SELECT Z_PK, Z_ENT FROM \(entity.table.name) WHERE Z_PK IN \(SQLiteTable.boundKeys)")
                    statement.bind(SQLiteTable.keyList(keys), at: 1)
                    while try statement.step() {
                        doomed.add(key: statement.int64(0), entity: statement.int64(1), mapping: mapping)
                    }
                    statement.reset()
                } else {
                    let limited = request.fetchLimit > 0 || request.fetchOffset > 0
                    // (History needs the keys of the rows, and their tombstones.)
                    if !limited, _history == nil,
                        !_deletionTouchesOtherRows(entity, includesSubentities: request.includesSubentities)
                    {
                        // Nothing but the rows themselves: one statement (after reading their keys, if asked for).
                        let objectIDs =
                            delete.wantsObjectIDs
                            ? try _objectIDs(
                                SQLiteQueryGenerator(mapping: mapping, store: self).batchKeys(
                                    request.predicate, includesSubentities: request.includesSubentities,
                                    entity: entity),
                                connection: connection, mapping: mapping) : []
                        let plan = try SQLiteQueryGenerator(mapping: mapping, store: self).batchDelete(
                            request.predicate, includesSubentities: request.includesSubentities, entity: entity)
                        try connection.statement(plan.sql).run(plan.arguments)
                        deletedWithoutKeys = true
                        return StoreBatchOutcome(count: connection.changes, objectIDs: objectIDs)
                    }
                    let plan: SQLiteStatementPlan
                    if limited || !(request.sortDescriptors ?? []).isEmpty {
                        let fetch = SQLiteQueryGenerator(mapping: mapping, store: self).plan(
                            request, entity: entity, selection: .keys)
                        guard fetch.isComplete else {
                            throw SQLiteUntranslatable(fetch.untranslatable.joined(separator: "; "))
                        }
                        plan = SQLiteStatementPlan(sql: fetch.sql, arguments: fetch.arguments)
                    } else {
                        plan = try SQLiteQueryGenerator(mapping: mapping, store: self).batchKeys(
                            request.predicate, includesSubentities: request.includesSubentities, entity: entity)
                    }
                    let statement = try connection.statement(plan.sql)
                    statement.bind(plan.arguments)
                    while try statement.step() {
                        doomed.add(key: statement.int64(0), entity: statement.int64(1), mapping: mapping)
                    }
                    statement.reset()
                }
                // 2. Cascades, round by round; 3. deny rules; 4. nullified references; 5. the rows.
                try _cascade(&doomed, connection: connection, mapping: mapping)
                try _checkDenyRules(doomed, connection: connection, mapping: mapping)
                let nullified = try _nullifyReferences(to: doomed, connection: connection, mapping: mapping)
                let rows = doomed.byEntity.sorted { $0.key < $1.key }.flatMap { number, keys in
                    keys.compactMap { key in mapping.entity(number: number).map { (entity: $0, key: key) } }
                }
                let tombstones =
                    (_history?.tombstoneColumns ?? 0) > 0
                    ? try _history!.tombstones(of: rows, connection: connection) : [:]
                try _deleteRows(doomed, connection: connection, mapping: mapping)
                if let history = _history {
                    let changes = rows.map { row in
                        SQLiteHistoryChange(
                            type: .delete, entity: row.entity.number, key: row.key,
                            tombstone: tombstones[SQLiteHistoryKey(entity: row.entity.number, key: row.key)] ?? [])
                    }
                    try history.record(changes, author: delete.author, connection: connection)
                }
                let deleted = doomed.objectIDs(store: self, mapping: mapping)
                for objectID in deleted { _snapshots[objectID] = nil }
                if !nullified.isEmpty { _forgetRows(of: nullified, mapping: mapping) }
                return StoreBatchOutcome(count: deleted.count, objectIDs: delete.wantsObjectIDs ? deleted : [])
            }
            _toManyCache = [:]
            if deletedWithoutKeys { _forgetRows(of: [entity.table], mapping: mapping) }
            _forgetDerivedCounts(mapping: mapping)
            return outcome
        } catch let untranslatable as SQLiteUntranslatable {
            throw _untranslatable(untranslatable, request: "batch delete", entity: requested)
        } catch let error as SQLiteError {
            throw error.coreDataError(url: _url, action: "deleting from")
        }
    }

    /// Whether deleting rows of `entity` (and of its subentities) does more than remove them: delete rules to apply,
    /// or join rows to remove.
    private func _deletionTouchesOtherRows(_ entity: SQLiteEntityMapping, includesSubentities: Bool) -> Bool {
        let kinds = includesSubentities ? Set(entity.kindNumbers) : [entity.number]
        guard let mapping = _mapping, mapping.joinColumns(holdingKeysOf: entity.table).isEmpty else { return true }
        for member in mapping.entities where kinds.contains(member.number) {
            for slot in member.slots {
                switch slot {
                case .toMany(.join(_), _):
                    return true
                case .toMany(_, let relationship), .toOne(_, _, let relationship):
                    switch relationship._deleteRule {
                    case .cascadeDeleteRule, .denyDeleteRule:
                        return true
                    case .nullifyDeleteRule:
                        if let inverse = relationship._inverseRelationship, !inverse.isToMany { return true }
                    case .noActionDeleteRule:
                        break
                    }
                default:
                    break
                }
            }
        }
        return false
    }

    /// Adds the destinations of the cascading relationships of the doomed rows, and theirs, until no new row comes.
    private func _cascade(_ doomed: inout SQLiteDoomedRows, connection: SQLiteConnection, mapping: SQLiteModelMapping)
        throws
    {
        var round = doomed.byEntity
        while !round.isEmpty {
            var next: [Int64: [Int64]] = [:]
            for (number, keys) in round.sorted(by: { $0.key < $1.key }) {
                guard let entity = mapping.entity(number: number) else { continue }
                for slot in entity.slots {
                    guard let relationship = Self._relationship(of: slot),
                        relationship._deleteRule == .cascadeDeleteRule
                    else { continue }
                    for (destinationEntity, key) in try _destinations(
                        of: slot, entity: entity, from: keys, connection: connection, mapping: mapping)
                    {
                        if doomed.add(key: key, entity: destinationEntity, mapping: mapping) {
                            next[destinationEntity, default: []].append(key)
                        }
                    }
                }
            }
            round = next
        }
    }

    /// Throws `NSValidationRelationshipDeniedDeleteError` if a doomed row's deny relationship holds a row that is not
    /// doomed too.
    private func _checkDenyRules(_ doomed: SQLiteDoomedRows, connection: SQLiteConnection, mapping: SQLiteModelMapping)
        throws
    {
        for (number, keys) in doomed.byEntity.sorted(by: { $0.key < $1.key }) {
            guard let entity = mapping.entity(number: number) else { continue }
            for slot in entity.slots {
                guard let relationship = Self._relationship(of: slot), relationship._deleteRule == .denyDeleteRule
                else { continue }
                let remaining = try _destinations(
                    of: slot, entity: entity, from: keys, connection: connection, mapping: mapping
                ).filter { !doomed.contains(key: $0.key, entity: $0.entity, mapping: mapping) }
                guard !remaining.isEmpty else { continue }
                throw batchDenyError(
                    entityName: entity.name, relationship: relationship._name, remaining: remaining.count)
            }
        }
    }

    /// Sets to NULL the foreign keys that point at doomed rows from the rows of nullified relationships' inverses
    /// (one-to-one and the to-one side of one-to-many), raising those rows' versions. Returns the tables changed.
    private func _nullifyReferences(
        to doomed: SQLiteDoomedRows, connection: SQLiteConnection, mapping: SQLiteModelMapping
    ) throws -> [SQLiteTable] {
        var statements: [String: [Int64]] = [:]
        var tables: [SQLiteTable] = []
        for (number, keys) in doomed.byEntity {
            guard let entity = mapping.entity(number: number) else { continue }
            for slot in entity.slots {
                guard let relationship = Self._relationship(of: slot), relationship._deleteRule == .nullifyDeleteRule,
                    let inverse = relationship._inverseRelationship, !inverse.isToMany,
                    let destination = inverse._entity.flatMap(mapping.entity),
                    let inverseSlot = destination.entity._caches.slotByName[inverse._name],
                    inverseSlot < destination.slots.count,
                    case .toOne(let foreignKey, let entityColumn, _) = destination.slots[inverseSlot]
                else { continue }
                let table = destination.table
                let column = table.columns[foreignKey].name
                var assignments = ["Z_OPT = Z_OPT + 1", "\(column) = NULL"]
                if let entityColumn { assignments.append("\(table.columns[entityColumn].name) = NULL") }
                let sql =
                    "UPDATE \(table.name) SET \(assignments.joined(separator: ", ")) WHERE \(column) IN "
                    + SQLiteTable.boundKeys
                statements[sql, default: []].append(contentsOf: keys)
                if !tables.contains(where: { $0 === table }) { tables.append(table) }
            }
        }
        for (sql, keys) in statements.sorted(by: { $0.key < $1.key }) {
            try connection.statement(sql).run([SQLiteTable.keyList(keys)])
        }
        return tables
    }

    /// Deletes the doomed rows, table by table, and the join rows that name them.
    private func _deleteRows(_ doomed: SQLiteDoomedRows, connection: SQLiteConnection, mapping: SQLiteModelMapping)
        throws
    {
        for table in mapping.tables {
            let keys = doomed.keys(in: table, mapping: mapping)
            guard !keys.isEmpty else { continue }
            let list = SQLiteTable.keyList(keys)
            try connection.statement("DELETE FROM \(table.name) WHERE Z_PK IN \(SQLiteTable.boundKeys)").run([list])
            for join in mapping.joinColumns(holdingKeysOf: table) {
                try connection.statement("DELETE FROM \(join.table) WHERE \(join.column) IN \(SQLiteTable.boundKeys)")
                    .run([list])
            }
        }
    }

    /// The relationship a slot stores, if it stores one.
    private static func _relationship(of slot: SQLiteEntityMapping.Slot) -> NSRelationshipDescription? {
        switch slot {
        case .toOne(_, _, let relationship), .toMany(_, let relationship): return relationship
        default: return nil
        }
    }

    /// The destinations (entity number, key) of one relationship of the rows `keys` of `entity`.
    private func _destinations(
        of slot: SQLiteEntityMapping.Slot, entity: SQLiteEntityMapping, from keys: [Int64],
        connection: SQLiteConnection, mapping: SQLiteModelMapping
    ) throws -> [(entity: Int64, key: Int64)] {
        let sql: String
        switch slot {
        case .toOne(let foreignKey, _, let relationship):
            guard let destination = relationship._destinationEntity.flatMap(mapping.entity) else { return [] }
            let column = entity.table.columns[foreignKey].name
            sql =
                "SELECT d.Z_ENT, d.Z_PK FROM \(entity.table.name) s JOIN \(destination.table.name) d ON d.Z_PK = "
                + "s.\(column) WHERE s.Z_PK IN \(SQLiteTable.boundKeys)"
        case .toMany(.foreignKey(let table, let column, _), _):
            sql = "SELECT Z_ENT, Z_PK FROM \(table.name) WHERE \(column) IN \(SQLiteTable.boundKeys)"
        case .toMany(.join(let join), _):
            sql =
                "SELECT d.Z_ENT, d.Z_PK FROM \(join.table) j JOIN \(join.destinationTable) d ON d.Z_PK = "
                + "j.\(join.destinationColumn) WHERE j.\(join.sourceColumn) IN \(SQLiteTable.boundKeys)"
        default:
            return []
        }
        let statement = try connection.statement(sql)
        statement.bind(SQLiteTable.keyList(keys), at: 1)
        var destinations: [(entity: Int64, key: Int64)] = []
        while try statement.step() {
            destinations.append((statement.int64(0), statement.int64(1)))
        }
        statement.reset()
        return destinations
    }

    // MARK: Support

    /// The IDs of the rows `plan` selects (`Z_PK`, `Z_ENT`).
    private func _objectIDs(_ plan: SQLiteStatementPlan, connection: SQLiteConnection, mapping: SQLiteModelMapping)
        throws -> [NSManagedObjectID]
    {
        let statement = try connection.statement(plan.sql)
        statement.bind(plan.arguments)
        var references = SQLiteDestinationIDCache()
        var objectIDs: [NSManagedObjectID] = []
        while try statement.step() {
            guard let entity = mapping.entity(number: statement.int64(1)) else { continue }
            objectIDs.append(references.rowID(entity: entity.entity, key: statement.int64(0), store: self))
        }
        statement.reset()
        return objectIDs
    }

    /// Drops the row cache's snapshots of rows of `tables`, which a batch request changed underneath it.
    func _forgetRows(of tables: [SQLiteTable], mapping: SQLiteModelMapping) {
        guard !_snapshots.isEmpty else { return }
        let names = Set(tables.map(\.name))
        var stale: [NSManagedObjectID] = []
        for (objectID, _) in _snapshots where names.contains(mapping.entity(objectID._entity)?.table.name ?? "") {
            stale.append(objectID)
        }
        for objectID in stale { _snapshots[objectID] = nil }
    }

    /// Drops the snapshots of rows whose counts triggers keep (`to-many.@count` attributes), which a batch request
    /// may have changed.
    private func _forgetDerivedCounts(mapping: SQLiteModelMapping) {
        guard !mapping.derivedCounts.isEmpty else { return }
        let sources = Set(mapping.derivedCounts.map(\.sourceTable))
        _forgetRows(of: mapping.tables.filter { sources.contains($0.name) }, mapping: mapping)
    }

    /// The error for a batch request that SQL cannot express exactly.
    private func _untranslatable(_ reason: SQLiteUntranslatable, request: String, entity: NSEntityDescription)
        -> NSError
    {
        coreDataError(
            NSPersistentStoreUnsupportedRequestTypeError,
            """
            The SQLite store cannot run the \(request) of '\(entity._name ?? "")' as SQL: \(reason.reason). Batch \
            requests do not load objects; simplify the predicate, or fetch the objects and change them in a context
            """,
            userInfo: ["entity": entity._name ?? ""])
    }
}

/// The rows a batch delete removes, by entity number (a row's `Z_ENT`), each key once per table.
struct SQLiteDoomedRows {
    private(set) var byEntity: [Int64: [Int64]] = [:]
    /// Per root table: the keys already doomed.
    private var seen: [Int64: Set<Int64>] = [:]

    /// Adds a row; false if it was doomed already (or its entity is unknown).
    @discardableResult
    mutating func add(key: Int64, entity number: Int64, mapping: SQLiteModelMapping) -> Bool {
        guard let entity = mapping.entity(number: number) else { return false }
        guard seen[entity.table.rootNumber, default: []].insert(key).inserted else { return false }
        byEntity[number, default: []].append(key)
        return true
    }

    func contains(key: Int64, entity number: Int64, mapping: SQLiteModelMapping) -> Bool {
        guard let entity = mapping.entity(number: number) else { return false }
        return seen[entity.table.rootNumber]?.contains(key) ?? false
    }

    func keys(in table: SQLiteTable, mapping: SQLiteModelMapping) -> [Int64] {
        seen[table.rootNumber].map { $0.sorted() } ?? []
    }

    /// The IDs of the doomed rows, entity by entity in key order.
    func objectIDs(store: NSSQLiteStore, mapping: SQLiteModelMapping) -> [NSManagedObjectID] {
        var references = SQLiteDestinationIDCache()
        var objectIDs: [NSManagedObjectID] = []
        for (number, keys) in byEntity.sorted(by: { $0.key < $1.key }) {
            guard let entity = mapping.entity(number: number) else { continue }
            for key in keys {
                objectIDs.append(references.rowID(entity: entity.entity, key: key, store: store))
            }
        }
        return objectIDs
    }
}
