// The structural check that recognises a store as holding a model's data when the version hashes in its metadata
// do not decide (stores written by Apple's framework, whose hashes this release does not reproduce yet): the same
// entities with the same numbers and inheritance, and the same tables with the same columns of the same types.

extension SQLiteModelMapping {
    /// Entity numbers from here on belong to Apple's own bookkeeping entities (persistent history), not to models.
    static let firstInternalEntityNumber: Int64 = 16000

    /// Why the schema of the store behind `connection` cannot hold this mapping's data; `nil` if it can.
    func structuralMismatch(in connection: SQLiteConnection) throws -> String? {
        let rows = Dictionary(
            try SQLiteStoreMetadata.entityRows(connection).map { ($0.number, $0) },
            uniquingKeysWith: { first, _ in first })
        for mapping in entities {
            guard let row = rows[mapping.number] else {
                return "the store has no entity numbered \(mapping.number) for entity '\(mapping.name)'"
            }
            let names = [mapping.name, mapping.entity._renamingIdentifier].compactMap { $0 }
            guard names.contains(row.name) else {
                return "entity \(mapping.number) is '\(row.name)' in the store but '\(mapping.name)' in the model"
            }
            guard row.superNumber == mapping.superNumber else {
                return "entity '\(mapping.name)' has a different superentity in the store"
            }
        }
        let numbers = Set(entities.map(\.number))
        for row in rows.values.sorted(by: { $0.number < $1.number })
        where row.number < Self.firstInternalEntityNumber && !numbers.contains(row.number) {
            return "the store has entity '\(row.name)', which the model lacks"
        }
        let existing = try connection.tableNames()
        for table in tables {
            var expected = ["Z_PK": "INTEGER", "Z_ENT": "INTEGER", "Z_OPT": "INTEGER"]
            for column in table.columns { expected[column.name] = column.type.rawValue }
            if let problem = try mismatch(of: table.name, expected: expected, existing: existing, in: connection) {
                return problem
            }
        }
        for join in joinTables {
            var expected = [join.firstColumn: "INTEGER", join.secondColumn: "INTEGER"]
            for column in join.orderColumns { expected[column] = "INTEGER" }
            if let problem = try mismatch(of: join.name, expected: expected, existing: existing, in: connection) {
                return problem
            }
        }
        return nil
    }

    private func mismatch(
        of table: String, expected: [String: String], existing: Set<String>, in connection: SQLiteConnection
    ) throws -> String? {
        guard existing.contains(table) else { return "the store has no table \(table)" }
        var actual: [String: String] = [:]
        for column in try connection.columns(of: table) { actual[column.name.uppercased()] = column.type.uppercased() }
        for (name, type) in expected.sorted(by: { $0.key < $1.key }) {
            guard let found = actual[name] else { return "table \(table) has no column \(name)" }
            guard found == type else { return "column \(table).\(name) is \(found) in the store, \(type) in the model" }
        }
        if let extra = actual.keys.sorted().first(where: { expected[$0] == nil }) {
            return "table \(table) has column \(extra), which the model does not define"
        }
        return nil
    }
}
