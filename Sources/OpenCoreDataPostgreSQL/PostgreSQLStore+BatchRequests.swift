import Foundation
import OpenCoreData
import OpenCoreDataCore

/// Batch requests as set-based SQL, each in one transaction that ends with the store's `NOTIFY` (so that listening
/// coordinators and processes learn of it, as of a save):
///
/// - An update is one `UPDATE … SET "Z_OPT" = "Z_OPT" + 1, … FROM (SELECT … FOR UPDATE) … RETURNING` the keys: the
///   matching rows are locked in key order (the order saves lock rows in, so that the two cannot deadlock), and the
///   version goes up, so that a context holding one of the rows gets a merge conflict when it saves it.
/// - A deletion selects the keys to delete, follows cascading relationships round by round, checks deny rules,
///   nullifies the foreign keys that point at deleted rows from rows that stay (raising their versions), and deletes
///   the rows and their join rows — a statement per relationship or table, over all keys at once (`= ANY($1)`).
/// - An insertion takes keys from `Z_PRIMARYKEY` (outside its transaction, as a save does) and inserts the objects a
///   few thousand at a time, one `INSERT … SELECT … FROM ROWS FROM (unnest(…), …)` per chunk
///   (`PostgreSQLStore+ManyRows.swift`).
///
/// A request whose predicate the generator leaves to memory is run by the framework through a private context
/// instead, with the same results (and, through its save, the same versions and notification).
extension PostgreSQLStore: PersistentStoreBatchExecuting {
    package func executeBatchUpdate(_ update: StoreBatchUpdate) throws -> StoreBatchOutcome {
        let (connection, schema) = try openForWriting()
        rowCache.forgetAll()  // The rows it changes are not known before it runs.
        guard let entity = schema.entity(update.entity) else { return StoreBatchOutcome() }
        let generator = PostgreSQLQueryGenerator(schema: schema, store: self, foldsCase: try foldsCase(connection))
        var conditions = generator.entityCondition(entity, includesSubentities: update.includesSubentities).map {
            [$0]
        }
        if let predicate = update.predicate {
            guard let sql = generator.translate(predicate, entity: entity, depth: 0) else {
                return try NSManagedObjectContext._emulate(update, in: self)
            }
            conditions = (conditions ?? []) + [sql]
        }
        var assignments = ["\"Z_OPT\" = u.\"Z_OPT\" + 1"]
        for assignment in update.assignments {
            guard case .attribute(let column, let type, let attribute)? = entity.slotColumns[assignment.slot] else {
                continue
            }
            let value = try batchValue(assignment.value, type: type, attribute: attribute, entity: entity, generator)
            assignments.append("\(quoted(column)) = \(value)")
        }
        var matching = "SELECT t0.\"Z_PK\" FROM \(schema.qualified(entity.table.name)) t0"
        if !generator.joins.isEmpty { matching += " " + generator.joins.joined(separator: " ") }
        if let conditions, !conditions.isEmpty { matching += " WHERE " + conditions.joined(separator: " AND ") }
        matching += " ORDER BY t0.\"Z_PK\" FOR UPDATE OF t0"
        let sql = """
            UPDATE \(schema.qualified(entity.table.name)) u SET \(assignments.joined(separator: ", ")) \
            FROM (\(matching)) m WHERE u."Z_PK" = m."Z_PK" RETURNING u."Z_PK", u."Z_ENT"
            """
        do {
            return try connection.transaction {
                let result = try connection.query(sql, generator.arguments)
                if history != nil {
                    let rows = (0..<result.rowCount).compactMap { index -> (key: Int64, entity: Int64)? in
                        guard let key = result.int64(index, 0), let number = result.int64(index, 1) else { return nil }
                        return (key, number)
                    }
                    try recordBatchUpdate(
                        rows, names: update.assignments.map(\.attribute.name), author: update.author,
                        connection: connection, schema: schema)
                }
                try notifyCommit(connection)
                var outcome = StoreBatchOutcome(count: result.rowCount)
                if update.wantsObjectIDs { outcome.objectIDs = try objectIDs(result, schema: schema) }
                return outcome
            }
        } catch {
            throw self.error(error, code: NSPersistentStoreOperationError, action: "updating in")
        }
    }

    /// SQL for a value a batch update assigns to a column of `type`.
    private func batchValue(
        _ value: StoreBatchValue, type: NSAttributeType, attribute: NSAttributeDescription, entity: PostgreSQLEntity,
        _ generator: PostgreSQLQueryGenerator
    ) throws -> String {
        switch value {
        case .constant(let constant):
            if case .null = constant { return "NULL" }
            let text: String?
            do {
                text = try PostgreSQLValueCoding.text(constant, type: type, attribute: attribute)
            } catch let error as PostgreSQLValueCoding.UnstorableValue {
                throw Self.error(
                    NSPersistentStoreOperationError,
                    "The new value of '\(attribute.name)' cannot be stored in PostgreSQL: \(error.reason)")
            }
            return generator.bind(text, PostgreSQLSchema.columnType(type))
        default:
            return try arithmetic(value, entity: entity, generator)
        }
    }

    /// SQL for the numbers and dates of a batch update's expressions, of the row being updated (`u`).
    private func arithmetic(_ value: StoreBatchValue, entity: PostgreSQLEntity, _ generator: PostgreSQLQueryGenerator)
        throws -> String
    {
        switch value {
        case .constant(.int(let number)):
            return generator.bind(String(number), "bigint")
        case .constant(.double(let number)):
            return generator.bind(PostgreSQLValueCoding.text(number), "double precision")
        case .constant(.date(let date)):
            return generator.bind(PostgreSQLValueCoding.text(date.timeIntervalSinceReferenceDate), "double precision")
        case .now:
            let now = Date().timeIntervalSinceReferenceDate
            return generator.bind(PostgreSQLValueCoding.text(now), "double precision")
        case .attribute(let attribute, let slot):
            guard case .attribute(let column, _, _)? = entity.slotColumns[slot] else {
                throw Self.error(
                    NSPersistentStoreOperationError, "'\(attribute.name)' is not stored in the PostgreSQL store")
            }
            return "u." + quoted(column)
        case .arithmetic(let operation, let lhs, let rhs):
            let a = try arithmetic(lhs, entity: entity, generator)
            let b = try arithmetic(rhs, entity: entity, generator)
            switch operation {
            case .add: return "(\(a) + \(b))"
            case .subtract: return "(\(a) - \(b))"
            case .multiply: return "(\(a) * \(b))"
            case .divide: return "((\(a))::double precision / \(b))"
            }
        case .constant(let other):
            throw Self.error(
                NSPersistentStoreUnsupportedRequestTypeError,
                "A batch update computes with numbers and dates, not with \(other)")
        }
    }

    // MARK: Inserting

    package func executeBatchInsert(_ insert: StoreBatchInsert) throws -> StoreBatchOutcome {
        let (connection, schema) = try openForWriting()
        guard let entity = schema.entity(insert.entity) else {
            throw Self.error(
                NSPersistentStoreSaveError,
                "The PostgreSQL store at \(redactedURL) does not hold entity '\(insert.entity.name ?? "")'")
        }
        // Keys are taken in statements of their own, outside the insert's transaction, as a save takes them: the
        // `Z_PRIMARYKEY` row is locked only for the moment of taking, so other writers never wait for a batch (a
        // batch that is rolled back leaves a gap in the keys, no more). The first chunk is read, and its keys taken,
        // before the transaction begins; later chunks take theirs through a second connection.
        var keyConnection: PostgreSQLConnection?
        func rows(_ chunk: [StoredValues], inTransaction: Bool) throws -> [PostgreSQLNewRow] {
            var taker = connection
            if inTransaction {
                if keyConnection == nil { keyConnection = try PostgreSQLConnection(connection.configuration) }
                taker = keyConnection!
            }
            let last = try reserveKeys(chunk.count, root: entity.table.rootNumber, taker, schema)
            let first = last - Int64(chunk.count) + 1
            return chunk.enumerated().map { offset, values in
                PostgreSQLNewRow(key: first + Int64(offset), entity: entity, values: values)
            }
        }
        do {
            var chunk: [StoredValues] = []
            while chunk.count < Self.chunkSize, let values = try insert.next() { chunk.append(values) }
            guard !chunk.isEmpty else { return StoreBatchOutcome() }
            let firstRows = try rows(chunk, inTransaction: false)
            return try connection.transaction {
                var outcome = StoreBatchOutcome()
                var inserted: [Int64] = []
                func write(_ rows: [PostgreSQLNewRow]) throws {
                    try insertRows(rows, table: entity.table, connection: connection, schema: schema)
                    outcome.count += rows.count
                    if history != nil { inserted += rows.map(\.key) }
                    if insert.wantsObjectIDs { outcome.objectIDs += rows.map { objectID(entity.entity, key: $0.key) } }
                }
                try write(firstRows)
                chunk.removeAll(keepingCapacity: true)
                while let values = try insert.next() {
                    chunk.append(values)
                    if chunk.count == Self.chunkSize {
                        try write(try rows(chunk, inTransaction: true))
                        chunk.removeAll(keepingCapacity: true)
                    }
                }
                if !chunk.isEmpty { try write(try rows(chunk, inTransaction: true)) }
                try recordBatchInsert(inserted, entity: entity, author: insert.author, connection: connection)
                try notifyCommit(connection)
                return outcome
            }
        } catch {
            throw self.error(error, code: NSPersistentStoreSaveError, action: "inserting into")
        }
    }

    // MARK: Deleting

    package func executeBatchDelete(_ delete: StoreBatchDelete) throws -> StoreBatchOutcome {
        let (connection, schema) = try openForWriting()
        rowCache.forgetAll()  // The rows it changes are not known before it runs.
        guard let requested = delete.request.entity, let entity = schema.entity(requested) else {
            return StoreBatchOutcome()
        }
        let keysSQL: String
        let arguments: [String?]
        if let objectIDs = delete.objectIDs {
            let keys = objectIDs.compactMap { id in
                schema.entity(id.entity)?.table === entity.table ? key(of: id) : nil
            }
            keysSQL = """
                SELECT "Z_PK", "Z_ENT" FROM \(schema.qualified(entity.table.name)) WHERE "Z_PK" = ANY($1::bigint[]) \
                ORDER BY "Z_PK"
                """
            arguments = [Self.keyList(keys)]
        } else {
            let generator = PostgreSQLQueryGenerator(schema: schema, store: self, foldsCase: try foldsCase(connection))
            let plan = generator.plan(delete.request, entity: entity, selection: .keys)
            guard plan.isComplete else { return try NSManagedObjectContext._emulate(delete, in: self) }
            keysSQL = plan.sql
            arguments = plan.arguments
        }
        do {
            return try connection.transaction {
                var doomed = PostgreSQLDoomedRows()
                let found = try connection.query(keysSQL, arguments)
                for index in 0..<found.rowCount {
                    if let key = found.int64(index, 0), let number = found.int64(index, 1) {
                        doomed.add(key: key, entity: number, schema: schema)
                    }
                }
                try cascade(&doomed, connection: connection, schema: schema)
                try checkDenyRules(doomed, connection: connection, schema: schema)
                try nullifyReferences(to: doomed, connection: connection, schema: schema)
                let tombstones = try batchDeleteTombstones(doomed.rows, connection: connection, schema: schema)
                try deleteRows(doomed, connection: connection, schema: schema)
                try recordBatchDelete(
                    doomed.rows, tombstones: tombstones, author: delete.author, connection: connection)
                let deleted = doomed.rows.compactMap { row in
                    schema.entity(number: row.entity).map { objectID($0.entity, key: row.key) }
                }
                if !deleted.isEmpty { try notifyCommit(connection) }
                return StoreBatchOutcome(count: deleted.count, objectIDs: delete.wantsObjectIDs ? deleted : [])
            }
        } catch {
            throw self.error(error, code: NSPersistentStoreOperationError, action: "deleting from")
        }
    }

    /// The relationships of `entity`'s slots whose delete rule is `rule`, with their slots.
    private func relationships(of entity: PostgreSQLEntity, rule: NSDeleteRule) -> [(Int, NSRelationshipDescription)] {
        let layout = entity.entity._caches
        return layout.slots.indices.compactMap { slot in
            guard let relationship = layout.slots[slot].property as? NSRelationshipDescription,
                !relationship.isTransient, relationship.deleteRule == rule
            else { return nil }
            return (slot, relationship)
        }
    }

    /// Adds the destinations of the cascading relationships of the doomed rows, and theirs, until no new row comes.
    private func cascade(
        _ doomed: inout PostgreSQLDoomedRows, connection: PostgreSQLConnection, schema: PostgreSQLSchema
    )
        throws
    {
        var round = doomed.byEntity
        var rounds = 0
        while !round.isEmpty {
            rounds += 1
            // Each round dooms rows not doomed before: there are no more rounds than rows, but say so all the same.
            guard rounds <= 100_000 else { break }
            var next: [Int64: [Int64]] = [:]
            for (number, keys) in round.sorted(by: { $0.key < $1.key }) {
                guard let entity = schema.entity(number: number) else { continue }
                for (slot, _) in relationships(of: entity, rule: .cascadeDeleteRule) {
                    for row in try destinations(of: slot, entity: entity, from: keys, connection, schema)
                    where doomed.add(key: row.key, entity: row.entity, schema: schema) {
                        next[row.entity, default: []].append(row.key)
                    }
                }
            }
            round = next
        }
    }

    /// Throws `NSValidationRelationshipDeniedDeleteError` if a doomed row's deny relationship holds a row that is not
    /// doomed too.
    private func checkDenyRules(
        _ doomed: PostgreSQLDoomedRows, connection: PostgreSQLConnection, schema: PostgreSQLSchema
    )
        throws
    {
        for (number, keys) in doomed.byEntity.sorted(by: { $0.key < $1.key }) {
            guard let entity = schema.entity(number: number) else { continue }
            for (slot, relationship) in relationships(of: entity, rule: .denyDeleteRule) {
                let remaining = try destinations(of: slot, entity: entity, from: keys, connection, schema).filter {
                    !doomed.contains(key: $0.key, entity: $0.entity, schema: schema)
                }
                guard !remaining.isEmpty else { continue }
                let entityName = entity.entity.name ?? ""
                throw Self.error(
                    NSValidationRelationshipDeniedDeleteError,
                    """
                    The batch delete would delete \(entityName) objects whose relationship '\(relationship.name)' \
                    still holds \(remaining.count) object(s) that are not deleted with them, which its deny rule \
                    forbids; nothing was deleted
                    """,
                    userInfo: [NSValidationKeyErrorKey: relationship.name, "entity": entityName])
            }
        }
    }

    /// Sets to NULL the foreign keys that point at doomed rows from the rows of nullified relationships' to-one
    /// inverses, raising those rows' versions.
    private func nullifyReferences(
        to doomed: PostgreSQLDoomedRows, connection: PostgreSQLConnection, schema: PostgreSQLSchema
    ) throws {
        var statements: [String: [Int64]] = [:]
        for (number, keys) in doomed.byEntity {
            guard let entity = schema.entity(number: number) else { continue }
            for (_, relationship) in relationships(of: entity, rule: .nullifyDeleteRule) {
                guard let inverse = relationship.inverseRelationship, !inverse.isToMany,
                    let destination = schema.entity(inverse.entity), let slot = destination.slotIndex[inverse.name],
                    case .toOne(let column, let entityColumn, _)? = destination.slotColumns[slot]
                else { continue }
                var assignments = ["\"Z_OPT\" = \"Z_OPT\" + 1", "\(quoted(column)) = NULL"]
                if let entityColumn { assignments.append("\(quoted(entityColumn)) = NULL") }
                let sql = """
                    UPDATE \(schema.qualified(destination.table.name)) SET \(assignments.joined(separator: ", ")) \
                    WHERE \(quoted(column)) = ANY($1::bigint[])
                    """
                statements[sql, default: []] += keys
            }
        }
        for (sql, keys) in statements.sorted(by: { $0.key < $1.key }) {
            try connection.query(sql, [Self.keyList(keys)])
        }
    }

    /// Deletes the doomed rows, table by table, and the join rows that name them.
    private func deleteRows(_ doomed: PostgreSQLDoomedRows, connection: PostgreSQLConnection, schema: PostgreSQLSchema)
        throws
    {
        for table in schema.tables {
            let keys = doomed.keys(in: table)
            guard !keys.isEmpty else { continue }
            let list = Self.keyList(keys)
            try connection.query(
                "DELETE FROM \(schema.qualified(table.name)) WHERE \"Z_PK\" = ANY($1::bigint[])", [list])
            var joins = Set<String>()
            for entity in schema.entities {
                for case .join(let join, let source, let destination, _, let destinationTable) in entity.toMany.values {
                    if entity.table === table { joins.insert(schema.qualified(join) + " WHERE " + quoted(source)) }
                    if destinationTable == table.name {
                        joins.insert(schema.qualified(join) + " WHERE " + quoted(destination))
                    }
                }
            }
            for join in joins.sorted() {
                try connection.query("DELETE FROM \(join) = ANY($1::bigint[])", [list])
            }
        }
    }

    /// The destinations (entity number, key) of one relationship of the rows `keys` of `entity`.
    private func destinations(
        of slot: Int, entity: PostgreSQLEntity, from keys: [Int64], _ connection: PostgreSQLConnection,
        _ schema: PostgreSQLSchema
    ) throws -> [(entity: Int64, key: Int64)] {
        let sql: String
        if case .toOne(let column, _, let destination)? = entity.slotColumns[slot],
            let target = schema.entity(destination)
        {
            sql = """
                SELECT d."Z_ENT", d."Z_PK" FROM \(schema.qualified(entity.table.name)) s \
                JOIN \(schema.qualified(target.table.name)) d ON d."Z_PK" = s.\(quoted(column)) \
                WHERE s."Z_PK" = ANY($1::bigint[])
                """
        } else {
            switch entity.toMany[slot] {
            case .foreignKey(let table, let column, _)?:
                sql = """
                    SELECT "Z_ENT", "Z_PK" FROM \(schema.qualified(table)) WHERE \(quoted(column)) = ANY($1::bigint[])
                    """
            case .join(let table, let source, let destination, _, let destinationTable)?:
                sql = """
                    SELECT d."Z_ENT", d."Z_PK" FROM \(schema.qualified(table)) j \
                    JOIN \(schema.qualified(destinationTable)) d ON d."Z_PK" = j.\(quoted(destination)) \
                    WHERE j.\(quoted(source)) = ANY($1::bigint[])
                    """
            case nil:
                return []
            }
        }
        let result = try connection.query(sql, [Self.keyList(keys)])
        return (0..<result.rowCount).compactMap { index in
            guard let number = result.int64(index, 0), let key = result.int64(index, 1) else { return nil }
            return (number, key)
        }
    }

    // MARK: Support

    /// The open connection and mapping of a store that may be written.
    func openForWriting() throws -> (PostgreSQLConnection, PostgreSQLSchema) {
        guard !isReadOnly else {
            throw Self.error(NSPersistentStoreSaveError, "The PostgreSQL store at \(redactedURL) was added read-only")
        }
        return try open()
    }

    /// Tells every coordinator and process that listens for this store's commits of this one, when it commits.
    func notifyCommit(_ connection: PostgreSQLConnection) throws {
        guard let identifier = metadata?[NSStoreUUIDKey] as? String else { return }
        // With history, the payload is the number of the last transaction (`PostgreSQLStore+History.swift`).
        try connection.query(
            "SELECT pg_notify($1, \(notifyPayloadSQL))", [PostgreSQLChangeListener.channel(forStore: identifier)])
    }

    /// Keys as a `bigint[]` parameter.
    static func keyList(_ keys: [Int64]) -> String {
        "{" + keys.map(String.init).joined(separator: ",") + "}"
    }

    /// The IDs of a result whose first columns are `Z_PK` and `Z_ENT`.
    private func objectIDs(_ result: PostgreSQLResult, schema: PostgreSQLSchema) throws -> [NSManagedObjectID] {
        (0..<result.rowCount).compactMap { index in
            guard let key = result.int64(index, 0), let number = result.int64(index, 1),
                let entity = schema.entity(number: number)
            else { return nil }
            return objectID(entity.entity, key: key)
        }
    }
}

/// The rows a batch delete removes, by entity number (a row's `Z_ENT`), each key once per table.
struct PostgreSQLDoomedRows {
    private(set) var byEntity: [Int64: [Int64]] = [:]
    /// In the order they were doomed.
    private(set) var rows: [(entity: Int64, key: Int64)] = []
    /// Per root table: the keys already doomed.
    private var seen: [Int64: Set<Int64>] = [:]

    /// Adds a row; false if it was doomed already (or its entity is unknown).
    @discardableResult
    mutating func add(key: Int64, entity number: Int64, schema: PostgreSQLSchema) -> Bool {
        guard let entity = schema.entity(number: number),
            seen[entity.table.rootNumber, default: []].insert(key).inserted
        else { return false }
        byEntity[number, default: []].append(key)
        rows.append((number, key))
        return true
    }

    func contains(key: Int64, entity number: Int64, schema: PostgreSQLSchema) -> Bool {
        guard let entity = schema.entity(number: number) else { return false }
        return seen[entity.table.rootNumber]?.contains(key) ?? false
    }

    func keys(in table: PostgreSQLTable) -> [Int64] {
        seen[table.rootNumber].map { $0.sorted() } ?? []
    }
}
