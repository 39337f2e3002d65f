import Foundation
import OpenCoreData
import OpenCoreDataCore

/// A to-many fault answered with its destinations' rows, values included, in one query
/// (`PersistentStoreToManyRows`): walking a relationship and reading the destinations' attributes is one query per
/// relationship instead of one more per destination. The rows are not added to the row cache, as in the SQLite store:
/// every context that touches the relationship reads it itself and makes its objects from these rows at once, so a
/// kept row would only fulfil a fault of the same object by ID elsewhere meanwhile. They replace the rows the cache
/// holds of the same objects, so that such a fault sees what was read last.
extension PostgreSQLStore: PersistentStoreToManyRows {
    package func destinationRows(of relationship: NSRelationshipDescription, from objectID: NSManagedObjectID) throws
        -> [StoreRow]
    {
        let (connection, schema) = try open()
        guard let key = key(of: objectID), let entity = schema.entity(objectID.entity),
            let slot = entity.slotIndex[relationship.name]
        else { return [] }
        guard
            let sql = destinationsSQL(
                slot: slot, of: entity, in: schema, selecting: { Self.rowColumns(of: $0, alias: "d") })
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
    /// alias is `d`. `nil` when the relationship has no storage in `schema`.
    func destinationsSQL(
        slot: Int, of entity: PostgreSQLEntity, in schema: PostgreSQLSchema,
        selecting columns: (PostgreSQLTable) -> String
    ) -> String? {
        switch entity.toMany[slot] {
        case .foreignKey(let tableName, let column, let orderColumn)?:
            guard let table = schema.tables.first(where: { $0.name == tableName }) else { return nil }
            let order = orderColumn.map { "d." + quoted($0) + " NULLS LAST, " } ?? ""
            return """
                SELECT \(columns(table)) FROM \(schema.qualified(tableName)) d \
                WHERE d.\(quoted(column)) = $1::bigint ORDER BY \(order)d."Z_PK"
                """
        case .join(let joinTable, let source, let destination, let orderColumn, let tableName)?:
            guard let table = schema.tables.first(where: { $0.name == tableName }) else { return nil }
            let order = orderColumn.map { "j." + quoted($0) + " NULLS LAST, " } ?? ""
            return """
                SELECT \(columns(table)) FROM \(schema.qualified(joinTable)) j \
                JOIN \(schema.qualified(tableName)) d ON d."Z_PK" = j.\(quoted(destination)) \
                WHERE j.\(quoted(source)) = $1::bigint ORDER BY \(order)d."Z_PK"
                """
        case nil:
            return nil
        }
    }

    /// `Z_PK`, `Z_ENT`, `Z_OPT` and every column of `table`, in the order `row(_:_:schema:values:)` reads them.
    static func rowColumns(of table: PostgreSQLTable, alias: String) -> String {
        (["\"Z_PK\"", "\"Z_ENT\"", "\"Z_OPT\""] + table.columns.map { quoted($0.name) })
            .map { alias + "." + $0 }.joined(separator: ", ")
    }
}
