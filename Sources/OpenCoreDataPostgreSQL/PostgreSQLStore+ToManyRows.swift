import Foundation
import OpenCoreData
import OpenCoreDataCore

/// A to-many fault answered with its destinations' rows, values included, in one query
/// (`PersistentStoreToManyRows`): walking a relationship and reading the destinations' attributes is one query per
/// relationship instead of one more per destination. The rows are not added to the row cache, as in the SQLite store:
/// every context that touches the relationship reads it itself and makes its objects from these rows at once, so a
/// kept row would only fulfil a fault of the same object by ID elsewhere meanwhile. They replace the rows the cache
/// holds of the same objects, so that such a fault sees what was read last.
///
/// Prefetching (`relationshipKeyPathsForPrefetching`, and the delete rules of many deleted objects) reads the
/// destinations of many sources in one query per relationship, whose rows wait in the row cache, by source, until
/// each fault fires (`PersistentStoreToManyPrefetching`).
extension PostgreSQLStore: PersistentStoreToManyRows, PersistentStoreToManyPrefetching {
    package func prefetchDestinations(of relationship: NSRelationshipDescription, from objectIDs: [NSManagedObjectID])
        throws
    {
        let (connection, schema) = try open()
        try prefetchDestinations(of: relationship, from: objectIDs, connection: connection, schema: schema)
    }

    /// Loads the destinations along each of `keyPaths` (`relationshipKeyPathsForPrefetching`) for `rows`, one query
    /// per relationship and level: to-many destinations for their faults to take, to-one destinations the row cache
    /// does not hold into it, one query per table.
    func prefetch(_ keyPaths: [String]?, of rows: [StoreRow]) throws {
        guard let keyPaths, !keyPaths.isEmpty, !rows.isEmpty else { return }
        let (connection, schema) = try open()
        for keyPath in keyPaths {
            var level = rows
            for component in keyPath.split(separator: ".").map(String.init) where !level.isEmpty {
                var toMany:
                    [ObjectIdentifier: (relationship: NSRelationshipDescription, sources: [NSManagedObjectID])] =
                        [:]
                var next: [StoreRow] = []
                var toOne: [NSManagedObjectID] = []
                for row in level {
                    guard let relationship = row.objectID.entity.relationshipsByName[component] else { continue }
                    if relationship.isToMany {
                        toMany[ObjectIdentifier(relationship), default: (relationship, [])].sources.append(row.objectID)
                    } else if let slot = schema.entity(row.objectID.entity)?.slotIndex[component],
                        slot < row.values.count, case .objectID(let destination) = row.values[slot]
                    {
                        toOne.append(destination)
                    }
                }
                next += try loadRows(of: toOne, connection: connection, schema: schema)
                for (_, group) in toMany {
                    next += try prefetchDestinations(
                        of: group.relationship, from: group.sources, connection: connection, schema: schema)
                }
                level = next
            }
        }
    }

    /// The rows of `objectIDs`: those the row cache holds, and the others read in one query per table and kept there.
    private func loadRows(of objectIDs: [NSManagedObjectID], connection: PostgreSQLConnection, schema: PostgreSQLSchema)
        throws -> [StoreRow]
    {
        var found: [StoreRow] = []
        var missing: [ObjectIdentifier: (table: PostgreSQLTable, keys: Set<Int64>)] = [:]
        for objectID in Set(objectIDs) {
            if let cached = rowCache.row(for: objectID, stalenessInterval: -1) {
                found.append(cached)
            } else if let key = key(of: objectID), let table = schema.entity(objectID.entity)?.table {
                missing[ObjectIdentifier(table), default: (table, [])].keys.insert(key)
            }
        }
        do {
            for (_, group) in missing {
                let result = try connection.query(
                    "SELECT \(group.table.wholeRow.t0) FROM \(schema.qualified(group.table.name)) t0 "
                        + "WHERE t0.\"Z_PK\" = ANY($1::bigint[])", [Self.keyList(Array(group.keys))])
                let read = try rows(result, schema: schema, values: true)
                rowCache.remember(read)
                found += read
            }
        } catch {
            throw self.error(error, code: NSPersistentStoreOperationError, action: "reading from")
        }
        return found
    }

    /// Reads the destinations of `relationship` from every source in one query per storage and keeps them for their
    /// faults; returns their rows.
    @discardableResult
    func prefetchDestinations(
        of relationship: NSRelationshipDescription, from objectIDs: [NSManagedObjectID],
        connection: PostgreSQLConnection, schema: PostgreSQLSchema
    ) throws -> [StoreRow] {
        // Sources of several entities may share the relationship through inheritance: one query per storage.
        var sqlOf: [ObjectIdentifier: String?] = [:]
        var groups: [String: [Int64: NSManagedObjectID]] = [:]
        for objectID in objectIDs {
            guard let key = key(of: objectID) else { continue }
            let entityKey = ObjectIdentifier(objectID.entity)
            if sqlOf[entityKey] == nil {
                sqlOf[entityKey] = schema.entity(objectID.entity).flatMap { entity in
                    entity.slotIndex[relationship.name].flatMap { slot in
                        destinationsSQL(slot: slot, of: entity, in: schema, many: true, selecting: { $0.wholeRow.d })
                    }
                }
            }
            guard let sql = sqlOf[entityKey] ?? nil else { continue }
            groups[sql, default: [:]][key] = objectID
        }
        var read: [StoreRow] = []
        do {
            for (sql, sources) in groups where !sources.isEmpty {
                let result = try connection.query(sql, [Self.keyList(Array(sources.keys))])
                var bySource: [NSManagedObjectID: [StoreRow]] = [:]
                for source in sources.values { bySource[source] = [] }
                var all: [StoreRow] = []
                all.reserveCapacity(result.rowCount)
                for index in 0..<result.rowCount {
                    let row = try row(result, index, schema: schema, values: true)
                    if let key = result.int64(index, result.columnCount - 1), let source = sources[key] {
                        bySource[source, default: []].append(row)
                    }
                    all.append(row)
                }
                rowCache.replace(all)
                rowCache.keepPrefetched(bySource, of: relationship)
                read += all
            }
        } catch {
            throw self.error(error, code: NSPersistentStoreOperationError, action: "reading from")
        }
        return read
    }

    package func destinationRows(of relationship: NSRelationshipDescription, from objectID: NSManagedObjectID) throws
        -> [StoreRow]
    {
        if let prefetched = rowCache.takePrefetched(relationship, of: objectID) { return prefetched }
        let (connection, schema) = try open()
        guard let key = key(of: objectID), let entity = schema.entity(objectID.entity),
            let slot = entity.slotIndex[relationship.name]
        else { return [] }
        guard
            let sql = destinationsSQL(
                slot: slot, of: entity, in: schema, selecting: { $0.wholeRow.d })
        else { return [] }
        do {
            let rows = try rows(try connection.query(sql, [String(key)]), schema: schema, values: true)
            rowCache.replace(rows)
            return rows
        } catch {
            throw self.error(error, code: NSPersistentStoreOperationError, action: "reading from")
        }
    }

    /// The query for the destinations of the to-many relationship in `slot` of `entity` from the object whose key is
    /// `$1`, in the relationship's order (then by key); `columns` says what to select of the destination table, whose
    /// alias is `d`. With `many`, `$1` is an array of source keys, and the source's key follows the columns, the rows
    /// ordered by it first. `nil` when the relationship has no storage in `schema`.
    func destinationsSQL(
        slot: Int, of entity: PostgreSQLEntity, in schema: PostgreSQLSchema, many: Bool = false,
        selecting columns: (PostgreSQLTable) -> String
    ) -> String? {
        let (table, from, sourceColumn, order): (String, String, String, String)
        switch entity.toMany[slot] {
        case .foreignKey(let tableName, let column, let orderColumn)?:
            (table, sourceColumn) = (tableName, "d." + quoted(column))
            from = "\(schema.qualified(tableName)) d"
            order = orderColumn.map { "d." + quoted($0) + " NULLS LAST, " } ?? ""
        case .join(let joinTable, let source, let destination, let orderColumn, let tableName)?:
            (table, sourceColumn) = (tableName, "j." + quoted(source))
            from =
                "\(schema.qualified(joinTable)) j JOIN \(schema.qualified(tableName)) d ON d.\"Z_PK\" = "
                + "j.\(quoted(destination))"
            order = orderColumn.map { "j." + quoted($0) + " NULLS LAST, " } ?? ""
        case nil:
            return nil
        }
        guard let destination = schema.tables.first(where: { $0.name == table }) else { return nil }
        guard many else {
            return """
                SELECT \(columns(destination)) FROM \(from) WHERE \(sourceColumn) = $1::bigint ORDER BY \(order)d."Z_PK"
                """
        }
        return """
            SELECT \(columns(destination)), \(sourceColumn) FROM \(from) WHERE \(sourceColumn) = ANY($1::bigint[]) \
            ORDER BY \(sourceColumn), \(order)d."Z_PK"
            """
    }
}
