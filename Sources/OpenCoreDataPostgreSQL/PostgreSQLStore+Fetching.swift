import Foundation
import OpenCoreData
import OpenCoreDataCore

/// Fetching: requests become SQL (`PostgreSQLQueryGenerator`), rows are decoded from libpq's text into the entity's
/// slots. The store adopts the framework's package-level store interface (`PersistentStoreBackend`), so that a
/// predicate it does not translate is evaluated by the context over candidate rows, as for the SQLite store.
extension PostgreSQLStore: PersistentStoreBackend {
    package func fetchRows(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> StoreFetchResult {
        let (connection, schema) = try open()
        let folds: Bool
        do {
            folds = try foldsCase(connection)
        } catch {
            throw self.error(error, code: NSPersistentStoreOperationError, action: "fetching from")
        }
        let result = try fetchRows(request, connection: connection, schema: schema, foldsCase: folds)
        remember(result)
        switch result {
        case .rows(let rows), .candidates(let rows): try prefetch(request.relationshipKeyPathsForPrefetching, of: rows)
        case .count, .objects: break
        }
        return result
    }

    /// The answer to `request` read through `connection`, leaving nothing in the store: for the store's own fetches
    /// and for those beside its other calls, on a connection of the pool.
    func fetchRows(
        _ request: NSFetchRequest<NSFetchRequestResult>, connection: PostgreSQLConnection, schema: PostgreSQLSchema,
        foldsCase: Bool
    ) throws -> StoreFetchResult {
        guard let requested = request.entity, let entity = schema.entity(requested) else { return .rows([]) }
        do {
            let generator = PostgreSQLQueryGenerator(schema: schema, store: self, foldsCase: foldsCase)
            if request.resultType == .countResultType {
                let plan = generator.plan(request, entity: entity, selection: .count)
                let result = try connection.query(plan.sql, plan.arguments)
                if plan.isComplete { return .count(Int(result.int64(0, 0) ?? 0)) }
                return .candidates(try rows(result, schema: schema, values: true))
            }
            let wantsValues = request.includesPropertyValues && request.resultType != .managedObjectIDResultType
            let plan = generator.plan(request, entity: entity, selection: wantsValues ? .rows : .keys)
            let result = try connection.query(plan.sql, plan.arguments)
            let rows = try rows(result, schema: schema, values: wantsValues || !plan.isComplete)
            return plan.isComplete ? .rows(rows) : .candidates(rows)
        } catch {
            throw self.error(error, code: NSPersistentStoreOperationError, action: "fetching from")
        }
    }

    /// Whether `lower()` folds more than ASCII in this database: asked once per connection.
    func foldsCase(_ connection: PostgreSQLConnection) throws -> Bool {
        if let known = caseFolding { return known }
        let ctype = try connection.query("SELECT current_setting('lc_ctype')").text(0, 0) ?? "C"
        let folds = ctype != "C" && ctype != "POSIX"
        caseFolding = folds
        return folds
    }

    /// The rows of a result whose columns are `Z_PK`, `Z_ENT`, `Z_OPT` and (if `values`) the table's columns.
    func rows(_ result: PostgreSQLResult, schema: PostgreSQLSchema, values: Bool) throws -> [StoreRow] {
        var rows: [StoreRow] = []
        rows.reserveCapacity(result.rowCount)
        for index in 0..<result.rowCount {
            rows.append(try row(result, index, schema: schema, values: values))
        }
        return rows
    }

    func row(_ result: PostgreSQLResult, _ index: Int, schema: PostgreSQLSchema, values: Bool) throws -> StoreRow {
        guard let key = result.int64(index, 0), let number = result.int64(index, 1),
            let entity = schema.entity(number: number)
        else {
            throw Self.error(
                CocoaError.Code.fileReadCorruptFile.rawValue,
                """
                The store at \(redactedURL) is damaged: a row has no key, or a Z_ENT (\(result.text(index, 1) ?? "NULL")) \
                that names no entity of the model
                """)
        }
        let version = result.int64(index, 2) ?? 0
        let objectID = self.objectID(entity.entity, key: key)
        guard values else { return StoreRow(objectID: objectID, values: [], version: version) }
        let table = entity.table
        var stored = StoredValues(repeating: .null, count: entity.slotColumns.count)
        for (slot, column) in entity.slotColumns.enumerated() {
            switch column {
            case .attribute(let name, let type, let attribute)?:
                guard let position = table.position[name], let text = result.bytes(index, position + 3) else {
                    continue
                }
                stored[slot] = PostgreSQLValueCoding.value(text, type: type, attribute: attribute)
            case .toOne(let name, let entityColumn, let destination)?:
                guard let position = table.position[name], let destinationKey = result.int64(index, position + 3)
                else { continue }
                var target = destination
                if let entityColumn, let entityPosition = table.position[entityColumn],
                    let actual = result.int64(index, entityPosition + 3).flatMap({ schema.entity(number: $0) })
                {
                    target = actual.entity
                }
                stored[slot] = .objectID(self.objectID(target, key: destinationKey))
            case nil:
                if entity.toMany[slot] != nil || isToMany(entity, slot) { stored[slot] = .toManyFault }
            }
        }
        return StoreRow(objectID: objectID, values: stored, version: version)
    }

    private func isToMany(_ entity: PostgreSQLEntity, _ slot: Int) -> Bool {
        if case .toMany = entity.entity._caches.kinds[slot] { return true }
        return false
    }

    // MARK: One object

    package func row(for objectID: NSManagedObjectID) throws -> StoreRow? {
        try row(for: objectID, locking: false)
    }

    /// The row of one object; with `locking`, locked until the transaction ends (`FOR UPDATE`).
    func row(for objectID: NSManagedObjectID, locking: Bool) throws -> StoreRow? {
        let (connection, schema) = try open()
        guard let key = key(of: objectID), let entity = schema.entity(objectID.entity) else { return nil }
        let table = entity.table
        do {
            let result = try connection.query(
                "SELECT \(table.wholeRow.t0) FROM \(schema.qualified(table.name)) t0 WHERE t0.\"Z_PK\" = $1::bigint"
                    + (locking ? " FOR UPDATE" : ""), [String(key)])
            guard result.rowCount == 1 else { return nil }
            return try row(result, 0, schema: schema, values: true)
        } catch {
            throw self.error(error, code: NSPersistentStoreOperationError, action: "reading from")
        }
    }

    package func destinations(of relationship: NSRelationshipDescription, from objectID: NSManagedObjectID) throws
        -> [NSManagedObjectID]
    {
        let (connection, schema) = try open()
        guard let key = key(of: objectID), let entity = schema.entity(objectID.entity),
            let slot = entity.slotIndex[relationship.name]
        else { return [] }
        guard let sql = destinationsSQL(slot: slot, of: entity, in: schema, selecting: { _ in #"d."Z_PK", d."Z_ENT""# })
        else { return [] }
        do {
            let result = try connection.query(sql, [String(key)])
            return try (0..<result.rowCount).map { index in
                guard let key = result.int64(index, 0), let number = result.int64(index, 1),
                    let destination = schema.entity(number: number)
                else {
                    throw Self.error(
                        CocoaError.Code.fileReadCorruptFile.rawValue,
                        "The store at \(redactedURL) is damaged: a destination of '\(relationship.name)' names no entity"
                    )
                }
                return self.objectID(destination.entity, key: key)
            }
        } catch {
            throw self.error(error, code: NSPersistentStoreOperationError, action: "reading from")
        }
    }
}
