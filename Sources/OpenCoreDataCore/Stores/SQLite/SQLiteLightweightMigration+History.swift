import Foundation

// Persistent history names objects by entity number and properties by position (see SQLiteHistory): the ZENTITY of a
// change, the bits of its ZCOLUMNS (the entity's stored properties sorted by name) and its ZTOMBSTONE<n> columns (the
// preserved attributes sorted by name). A migration renumbers entities and adds, removes and renames properties, so
// the history written before it would name other entities and properties than it did. It is rewritten in the
// migration's transaction:
//
// - a change of an entity the destination keeps gets the destination entity's number, its bitmap and tombstones
//   the positions of the destination's properties (each follows the mapping its column followed; a property that no
//   longer exists drops out of the bitmap, and its tombstone value with it);
// - a change of an entity that the migration drops is deleted with the entity's rows: no object can answer to it;
// - changes under entity numbers the source model does not know (written by something else) are left as they are.
//
// Transactions are never deleted, so a token taken before the migration still marks the same place.

extension SQLiteLightweightMigration {
    /// Rewrites the history tables, if the store has them, for the destination model (inside the migration's
    /// transaction).
    func migrateHistory() throws {
        guard try SQLiteHistorySchema.exists(in: connection) else { return }
        var destinationOf: [Int64: (entity: SQLiteEntityMapping, mapping: NSEntityMapping)] = [:]
        for (number, origin) in origins.sorted(by: { $0.key < $1.key }) where destinationOf[origin.source.number] == nil
        {
            guard let entity = destination.entities.first(where: { $0.number == number }) else { continue }
            destinationOf[origin.source.number] = (entity, origin.mapping)
        }
        let dropped = source.entities.map(\.number).filter { destinationOf[$0] == nil }
        if !dropped.isEmpty {
            try connection.statement("DELETE FROM ACHANGE WHERE ZENTITY IN \(SQLiteTable.boundKeys)")
                .run([SQLiteTable.keyList(dropped)])
        }
        let history = try SQLiteHistory(connection: connection)
        try addTombstoneColumns(history)
        for sourceEntity in source.entities {
            guard let (destinationEntity, mapping) = destinationOf[sourceEntity.number] else { continue }
            try migrateColumns(from: sourceEntity, to: destinationEntity, mapping: mapping, history: history)
            try migrateTombstones(from: sourceEntity, to: destinationEntity, mapping: mapping)
        }
        // The numbers last, all in one statement, so that no change is renumbered twice.
        let renumbered = destinationOf.mapValues(\.entity.number).filter { $0.key != $0.value }.sorted {
            $0.key < $1.key
        }
        guard !renumbered.isEmpty else { return }
        let cases = renumbered.map { _ in "WHEN ? THEN ?" }.joined(separator: " ")
        let bindings = renumbered.flatMap { [SQLiteValue.integer($0.key), .integer($0.value)] }
        try connection.statement(
            "UPDATE ACHANGE SET ZENTITY = CASE ZENTITY \(cases) END WHERE ZENTITY IN \(SQLiteTable.boundKeys)"
        ).run(bindings + [SQLiteTable.keyList(renumbered.map(\.key))])
    }

    /// Rewrites the ZCOLUMNS bitmaps of `sourceEntity`'s updates for the destination entity's properties.
    private func migrateColumns(
        from sourceEntity: SQLiteEntityMapping, to destinationEntity: SQLiteEntityMapping, mapping: NSEntityMapping,
        history: SQLiteHistory
    ) throws {
        guard
            let destinationName = mapping._historyColumnNames(
                from: sourceEntity.entity, to: destinationEntity.entity)
        else { return }
        let read = try connection.prepare(
            "SELECT Z_PK, ZCOLUMNS FROM ACHANGE WHERE ZENTITY = ? AND ZCOLUMNS IS NOT NULL", persistent: false)
        defer { read.finalize() }
        read.bind([.integer(sourceEntity.number)])
        var rewritten: [(key: Int64, columns: Data)] = []
        while try read.step() {
            guard let bitmap = read.blobIfNotNull(1),
                let properties = history.updatedProperties(bitmap, entity: sourceEntity.entity)
            else { continue }
            let names = properties.compactMap { destinationName[$0._name] }
            rewritten.append((read.int64(0), history.columnsBitmap(of: names, entity: destinationEntity.entity)))
        }
        let write = try connection.prepare("UPDATE ACHANGE SET ZCOLUMNS = ? WHERE Z_PK = ?", persistent: false)
        defer { write.finalize() }
        for row in rewritten { try write.run([.blob(row.columns), .integer(row.key)]) }
    }

    /// Moves the tombstone values of `sourceEntity`'s deletions to the columns of the destination entity's
    /// preserved attributes (one statement: SQLite assigns from the values the row had before it).
    private func migrateTombstones(
        from sourceEntity: SQLiteEntityMapping, to destinationEntity: SQLiteEntityMapping, mapping: NSEntityMapping
    ) throws {
        guard
            let sources = mapping._historyTombstoneSources(from: sourceEntity.entity, to: destinationEntity.entity)
        else { return }
        let assignments = sources.enumerated().map { index, from in
            "ZTOMBSTONE\(index) = " + (from.map { "ZTOMBSTONE\($0)" } ?? "NULL")
        }
        try connection.statement(
            "UPDATE ACHANGE SET \(assignments.joined(separator: ", ")) WHERE ZENTITY = ? AND ZCHANGETYPE = 2"
        ).run([.integer(sourceEntity.number)])
    }

    /// Adds the tombstone columns the destination model needs and the file lacks.
    private func addTombstoneColumns(_ history: SQLiteHistory) throws {
        let needed = max(
            SQLiteHistorySchema.tombstonesNeeded(by: destination), SQLiteHistorySchema.tombstonesNeeded(by: source))
        for index in history.tombstoneColumns..<max(history.tombstoneColumns, needed) {
            try connection.execute("ALTER TABLE ACHANGE ADD COLUMN ZTOMBSTONE\(index) BLOB")
        }
    }
}
