import Foundation
import OpenCoreData
import OpenCoreDataCore

// Persistent history names objects by entity number and properties by position (PostgreSQLSchema+History.swift): the
// ZENTITY of a change, the bits of its ZCOLUMNS and its ZTOMBSTONE<n> columns. A migration renumbers entities and adds,
// removes and renames properties, so the history is rewritten in the migration's transaction, as the SQLite store
// rewrites its own (SQLiteLightweightMigration+History.swift):
//
// - a change of an entity the destination keeps gets the destination entity's number, its bitmap and tombstones the
//   positions of the destination's properties (each follows the mapping its column followed);
// - a change of an entity that the migration drops is deleted with the entity's rows;
// - changes under entity numbers the source model does not know are left as they are.
//
// Transactions are never deleted, so a token taken before the migration still marks the same place.

extension PostgreSQLLightweightMigration {
    /// Rewrites the history tables, if the schema has them, for the destination model.
    func migrateHistory() throws {
        guard try PostgreSQLHistorySchema.exists(in: destination, connection: connection) else { return }
        let changes = destination.qualified(PostgreSQLHistorySchema.changeTable)
        var destinationOf: [Int64: (entity: PostgreSQLEntity, mapping: NSEntityMapping)] = [:]
        for (number, origin) in origins.sorted(by: { $0.key < $1.key }) where destinationOf[origin.source.number] == nil
        {
            guard let entity = destination.entities.first(where: { $0.number == number }) else { continue }
            destinationOf[origin.source.number] = (entity, origin.mapping)
        }
        let dropped = source.entities.map(\.number).filter { destinationOf[$0] == nil }
        if !dropped.isEmpty {
            try connection.query(
                "DELETE FROM \(changes) WHERE \"ZENTITY\" = ANY($1::integer[])", [Self.array(dropped)])
        }
        let present = try PostgreSQLHistorySchema.tombstoneColumns(in: destination, connection: connection)
        let needed = max(
            PostgreSQLHistorySchema.tombstonesNeeded(by: destination),
            PostgreSQLHistorySchema.tombstonesNeeded(by: source))
        for index in present..<max(present, needed) {
            try connection.execute("ALTER TABLE \(changes) ADD COLUMN \(quoted("ZTOMBSTONE\(index)")) text")
        }
        let layout = PersistentHistoryLayout()
        for sourceEntity in source.entities {
            guard let (destinationEntity, mapping) = destinationOf[sourceEntity.number] else { continue }
            try migrateColumns(from: sourceEntity, to: destinationEntity, mapping: mapping, layout: layout)
            try migrateTombstones(from: sourceEntity, to: destinationEntity, mapping: mapping)
        }
        // The numbers last, all in one statement, so that no change is renumbered twice.
        let renumbered = destinationOf.mapValues(\.entity.number).filter { $0.key != $0.value }.sorted {
            $0.key < $1.key
        }
        guard !renumbered.isEmpty else { return }
        let cases = renumbered.map { "WHEN \($0.key) THEN \($0.value)" }.joined(separator: " ")
        try connection.query(
            "UPDATE \(changes) SET \"ZENTITY\" = CASE \"ZENTITY\" \(cases) END WHERE \"ZENTITY\" = ANY($1::integer[])",
            [Self.array(renumbered.map(\.key))])
    }

    /// `numbers` as a PostgreSQL array literal, for a `$n::integer[]` parameter.
    static func array(_ numbers: [Int64]) -> String {
        "{" + numbers.map(String.init).joined(separator: ",") + "}"
    }

    /// Rewrites the ZCOLUMNS bitmaps of `sourceEntity`'s updates for the destination entity's properties.
    private func migrateColumns(
        from sourceEntity: PostgreSQLEntity, to destinationEntity: PostgreSQLEntity, mapping: NSEntityMapping,
        layout: PersistentHistoryLayout
    ) throws {
        guard
            let destinationName = mapping._historyColumnNames(
                from: sourceEntity.entity, to: destinationEntity.entity)
        else { return }
        let changes = destination.qualified(PostgreSQLHistorySchema.changeTable)
        let rows = try connection.query(
            "SELECT \"Z_PK\", \"ZCOLUMNS\" FROM \(changes) WHERE \"ZENTITY\" = $1::integer AND \"ZCOLUMNS\" IS NOT NULL",
            [String(sourceEntity.number)])
        for row in 0..<rows.rowCount {
            guard let key = rows.int64(row, 0), let text = rows.text(row, 1),
                let bitmap = PostgreSQLValueCoding.data(text),
                let properties = layout.updatedProperties(bitmap, entity: sourceEntity.entity)
            else { continue }
            let names = properties.compactMap { destinationName[$0.name] }
            let columns = layout.columnsBitmap(of: names, entity: destinationEntity.entity)
            try connection.query(
                "UPDATE \(changes) SET \"ZCOLUMNS\" = $1::bytea WHERE \"Z_PK\" = $2::bigint",
                [PostgreSQLValueCoding.hex(columns), String(key)])
        }
    }

    /// Moves the tombstone values of `sourceEntity`'s deletions to the columns of the destination entity's
    /// preserved attributes (one statement: an UPDATE assigns from the values the row had before it).
    private func migrateTombstones(
        from sourceEntity: PostgreSQLEntity, to destinationEntity: PostgreSQLEntity, mapping: NSEntityMapping
    ) throws {
        guard
            let sources = mapping._historyTombstoneSources(from: sourceEntity.entity, to: destinationEntity.entity)
        else { return }
        let assignments = sources.enumerated().map { index, from in
            quoted("ZTOMBSTONE\(index)") + " = " + (from.map { quoted("ZTOMBSTONE\($0)") } ?? "NULL")
        }
        try connection.query(
            "UPDATE \(destination.qualified(PostgreSQLHistorySchema.changeTable)) SET "
                + "\(assignments.joined(separator: ", ")) WHERE \"ZENTITY\" = $1::integer AND \"ZCHANGETYPE\" = 2",
            [String(sourceEntity.number)])
    }
}
