import Foundation
import OpenCoreData
import OpenCoreDataCore

// Lightweight migration of a PostgreSQL schema in place, with SQL only, in the caller's transaction — the same
// steps as the SQLite store's (SQLiteLightweightMigration.swift), in PostgreSQL's dialect:
//
// tables whose rows and columns the new version keeps as they are stay in place (with the new version's indexes);
// every other table of the source model (entity tables and join tables) is renamed aside; the destination's tables are
// created with the statements of a new store (so that columns, indexes and uniqueness constraints are a new store's)
// and each is filled with one INSERT … SELECT from the source table its entities' rows come from — entity numbers
// renumbered, columns renamed or converted, defaults filled, relationships moved between foreign keys and join
// tables; what needs the filled tables follows (entity columns of to-ones into hierarchies, positions of ordered
// relationships), then every non-optional property is checked to have a value in every row, and the renamed tables
// are dropped. `Z_PRIMARYKEY` gets the destination's entities with their key counters carried over. Primary keys
// never change, so object IDs survive the migration.
//
// What lightweight migration infers but the tables cannot follow in place (rows of two source tables gathered into
// one table, a value that is not a source property) throws `Unsupported`, with nothing changed.

struct PostgreSQLLightweightMigration {
    /// What the in-place migration does not do.
    struct Unsupported: Error {
        let reason: String
    }

    let source: PostgreSQLSchema
    let destination: PostgreSQLSchema
    let connection: PostgreSQLConnection
    /// The current name of each source table: its own, or the name it was renamed to.
    var aside: [String: String] = [:]
    /// Each destination entity number with the source entity and entity mapping it migrates from.
    var origins: [Int64: (source: PostgreSQLEntity, mapping: NSEntityMapping)] = [:]

    typealias Member = (destination: PostgreSQLEntity, source: PostgreSQLEntity, mapping: NSEntityMapping)

    init(
        source: PostgreSQLSchema, destination: PostgreSQLSchema, mapping: NSMappingModel,
        connection: PostgreSQLConnection
    ) {
        self.source = source
        self.destination = destination
        self.connection = connection
        for entityMapping in mapping.entityMappings {
            guard let to = entityMapping.destinationEntityName.flatMap(destination.entity(named:)),
                let from = entityMapping.sourceEntityName.flatMap(source.entity(named:))
            else { continue }
            origins[to.number] = (from, entityMapping)
        }
    }

    /// Parameters of one statement, `$1`, `$2`…, each value bound once however often it is used.
    final class Parameters {
        var values: [String?] = []
        private var placeholders: [String: String] = [:]

        func bind(_ value: String, type: String) -> String {
            let key = type + "\u{0}" + value
            if let known = placeholders[key] { return known }
            values.append(value)
            let placeholder = "$\(values.count)::\(type)"
            placeholders[key] = placeholder
            return placeholder
        }
    }

    /// A non-optional property whose column may be left empty by the migration: checked once the tables are filled.
    struct MandatoryCheck {
        let table: String
        let entity: PostgreSQLEntity
        let column: String
        let property: String
    }

    mutating func run() throws {
        let sourceTables = source.tables.map(\.name) + source.joinTables.map(\.name)
        // 1. The source tables must be there, as the source model lays them out.
        var existing = Set<String>()
        let relations = try connection.query(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1",
            [source.schema])
        for row in 0..<relations.rowCount { relations.text(row, 0).map { _ = existing.insert($0) } }
        if let missing = sourceTables.first(where: { !existing.contains($0) }) {
            throw Unsupported(reason: "the schema has no table \(missing), which its model version has")
        }
        // 2. Which tables stay as they are: planned once with every table where it is.
        for name in sourceTables { aside[name] = name }
        var kept = Set<String>()
        for table in destination.tables where try plan(table).isUnchanged(in: source) {
            kept.insert(table.name)
        }
        for join in destination.joinTables where try isUnchanged(join) {
            kept.insert(join.name)
        }
        // 3. Every other source table moves aside.
        var number = 0
        for name in sourceTables where !kept.contains(name) {
            var name_ = ""
            repeat {
                number += 1
                name_ = "Z_MIGRATING_\(number)"
            } while existing.contains(name_)
            try connection.execute("ALTER TABLE \(source.qualified(name)) RENAME TO \(quoted(name_))")
            aside[name] = name_
        }
        // 4. The destination tables, as a new store creates them, and their rows (planned again, now that the tables
        // they read have their new names); kept tables get the new version's indexes.
        let created = (destination.tables.map(\.name) + destination.joinTables.map(\.name)).filter {
            !kept.contains($0)
        }
        let markers = created.map { destination.qualified($0) + " (" }
        for statement in destination.createStatements where markers.contains(where: { statement.contains($0) }) {
            try connection.execute(statement)
        }
        for name in kept.sorted() { try replaceIndexes(of: name) }
        let renumbered = origins.contains { $0.key != $0.value.source.number }
        var postpasses: [String] = []
        var checks: [MandatoryCheck] = []
        for table in destination.tables {
            let plan = try plan(table)
            checks += plan.checks
            if kept.contains(table.name) {
                if renumbered { postpasses += try self.postpasses(for: table, values: nil) }
                continue
            }
            postpasses += try self.postpasses(for: table, values: plan.values)
            try fill(plan)
        }
        for join in destination.joinTables where !kept.contains(join.name) {
            try fill(join)
        }
        for statement in postpasses { try connection.execute(statement) }
        // 5. Every row has a value for every non-optional property, as validation would require.
        for check in checks { try run(check) }
        try migrateHistory()
        // 6. The source tables that moved aside go, and Z_PRIMARYKEY follows the destination's entities.
        for name in sourceTables where !kept.contains(name) {
            try connection.execute("DROP TABLE \(source.qualified(aside[name]!))")
        }
        try updatePrimaryKeys()
    }

    func run(_ check: MandatoryCheck) throws {
        let result = try connection.query(
            "SELECT count(*) FROM \(destination.qualified(check.table)) WHERE \"Z_ENT\" = $1::integer AND "
                + "\(quoted(check.column)) IS NULL", [String(check.entity.number)])
        let count = result.int64(0, 0) ?? 0
        guard count == 0 else {
            let entity = check.entity.entity.name ?? ""
            let validation = PostgreSQLStore.error(
                NSValidationMissingMandatoryPropertyError,
                "\(count) \(entity) objects have no value for the non-optional property '\(check.property)'",
                userInfo: [NSValidationKeyErrorKey: check.property])
            throw PostgreSQLStore.error(
                NSMigrationError,
                """
                The PostgreSQL store could not be migrated and is left as it was: \(count) \(entity) objects \
                would have no value for the non-optional property '\(check.property)', which the new model \
                version adds or makes non-optional without a default value; give it a default value in the model
                """, userInfo: [NSUnderlyingErrorKey: validation])
        }
    }

    /// The indexes of a kept table, made the new version's: those of the old version stay when they are the same,
    /// else every index but the primary key's is dropped and the new version's created.
    func replaceIndexes(of table: String) throws {
        let marker = destination.qualified(table) + " ("
        func indexStatements(_ schema: PostgreSQLSchema) -> [String] {
            schema.createStatements.filter { $0.contains(marker) && !$0.hasPrefix("CREATE TABLE") }
        }
        let wanted = indexStatements(destination)
        guard wanted != indexStatements(source) else { return }
        let indexes = try connection.query(
            "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = $1::regclass "
                + "AND NOT i.indisprimary", [destination.qualified(table)])
        for row in 0..<indexes.rowCount {
            guard let name = indexes.text(row, 0) else { continue }
            try connection.execute("DROP INDEX \(destination.qualified(name))")
        }
        for statement in wanted { try connection.execute(statement) }
    }

    // MARK: Entity tables

    /// How one destination table is made: its member entities with what they migrate from, and per column the SQL
    /// of its value for a row `t` of the source table.
    struct TablePlan {
        let table: PostgreSQLTable
        let members: [Member]
        var values: [String] = []
        let parameters = Parameters()
        var checks: [MandatoryCheck] = []

        /// Whether the source table of the same name holds exactly these rows and columns, copied as they are.
        func isUnchanged(in source: PostgreSQLSchema) -> Bool {
            guard let sourceTable = members.first?.source.table, sourceTable.name == table.name,
                sourceTable.columns.map(\.name) == table.columns.map(\.name),
                sourceTable.columns.map(\.type) == table.columns.map(\.type), parameters.values.isEmpty
            else { return false }
            let rows = Set(source.entities.filter { $0.table === sourceTable }.map(\.number))
            return rows == Set(members.map(\.source.number))
                && members.allSatisfy { $0.destination.number == $0.source.number }
                && zip(table.columns, values).allSatisfy { "t." + quoted($0.name) == $1 }
        }
    }

    func plan(_ table: PostgreSQLTable) throws -> TablePlan {
        let members: [Member] = destination.entities.filter { $0.table === table }.compactMap { entity in
            origins[entity.number].map { (entity, $0.source, $0.mapping) }
        }
        let sourceTables = Set(members.map { ObjectIdentifier($0.source.table) })
        guard sourceTables.count <= 1 else {
            throw Unsupported(reason: "the table \(table.name) would gather the rows of several source tables")
        }
        var plan = TablePlan(table: table, members: members)
        for column in table.columns {
            plan.values.append(
                try value(of: column.name, in: table, members: members, plan.parameters, checks: &plan.checks))
        }
        return plan
    }

    /// Fills a destination table from the one source table its entities' rows come from.
    func fill(_ plan: TablePlan) throws {
        let members = plan.members
        guard let sourceTable = members.first?.source.table, let from = aside[sourceTable.name] else { return }
        var renumber = "t.\"Z_ENT\""
        if members.contains(where: { $0.destination.number != $0.source.number }) {
            renumber =
                "CASE t.\"Z_ENT\" "
                + members.map { "WHEN \($0.source.number) THEN \($0.destination.number)" }.joined(separator: " ")
                + " END"
        }
        let names = (["Z_PK", "Z_ENT", "Z_OPT"] + plan.table.columns.map(\.name)).map(quoted)
        let numbers = members.map { String($0.source.number) }.joined(separator: ", ")
        try connection.query(
            "INSERT INTO \(destination.qualified(plan.table.name)) (\(names.joined(separator: ", "))) SELECT "
                + (["t.\"Z_PK\"", renumber, "t.\"Z_OPT\""] + plan.values).joined(separator: ", ")
                + " FROM \(source.qualified(from)) t WHERE t.\"Z_ENT\" IN (\(numbers))", plan.parameters.values)
    }

    /// The SQL of a destination column's value for a row `t` of the source table: per member entity, as one
    /// expression or a CASE on the row's entity.
    func value(
        of column: String, in table: PostgreSQLTable, members: [Member], _ parameters: Parameters,
        checks: inout [MandatoryCheck]
    ) throws -> String {
        var cases: [(number: Int64, sql: String)] = []
        for member in members {
            for (slot, slotColumn) in member.destination.slotColumns.enumerated() {
                let property = member.destination.entity._caches.slots[slot].property
                switch slotColumn {
                case .attribute(column, _, let attribute)?:
                    let (sql, mayBeEmpty) = try attributeValue(attribute, member, parameters)
                    if mayBeEmpty {
                        checks.append(
                            MandatoryCheck(
                                table: table.name, entity: member.destination, column: column, property: attribute.name)
                        )
                    }
                    cases.append((member.source.number, sql))
                case .toOne(column, _, _)?:
                    guard let relationship = property as? NSRelationshipDescription else { continue }
                    let (sql, mayBeEmpty) = try foreignKeyValue(relationship, sourceTable: member.source.table)
                    if mayBeEmpty && !relationship.isOptional {
                        checks.append(
                            MandatoryCheck(
                                table: table.name, entity: member.destination, column: column,
                                property: relationship.name))
                    }
                    cases.append((member.source.number, sql))
                default:
                    continue
                }
                break
            }
        }
        if cases.isEmpty, let sourceTable = members.first?.source.table {
            return try orderValue(of: column, in: table, sourceTable: sourceTable)
        }
        guard let first = cases.first else { return "NULL" }
        if cases.allSatisfy({ $0.sql == first.sql }) { return first.sql }
        return "CASE t.\"Z_ENT\"" + cases.map { " WHEN \($0.number) THEN \($0.sql)" }.joined() + " END"
    }

    /// An attribute's value: the source attribute's column it maps from, converted to its type, or its default;
    /// and whether a row may be left without a value the attribute requires.
    func attributeValue(_ attribute: NSAttributeDescription, _ member: Member, _ parameters: Parameters) throws
        -> (sql: String, mayBeEmpty: Bool)
    {
        var sql = "NULL"
        var mayBeEmpty = true
        if let name = try sourcePropertyName(of: attribute.name, in: member.mapping) {
            guard let sourceAttribute = member.source.entity.attributesByName[name],
                let slot = member.source.slotIndex[name],
                case .attribute(let column, _, _)? = member.source.slotColumns[slot]
            else {
                throw Unsupported(reason: "attribute '\(attribute.name)' maps from '\(name)', which has no column")
            }
            sql = try Self.convert("t." + quoted(column), from: sourceAttribute.attributeType, to: attribute)
            mayBeEmpty = sourceAttribute.isOptional
        }
        let mapped = sql != "NULL"
        if let value = attribute.defaultValue, !mapped || !attribute.isOptional,
            let stored = StoredValue.attributeValue(value, type: attribute.attributeType),
            let text = try? PostgreSQLValueCoding.text(stored, type: attribute.attributeType, attribute: attribute)
        {
            let bound = parameters.bind(text, type: PostgreSQLSchema.columnType(attribute.attributeType))
            return (mapped ? "COALESCE(\(sql), \(bound))" : bound, false)
        }
        return (sql, mayBeEmpty && !attribute.isOptional && !(attribute is NSDerivedAttributeDescription))
    }

    /// A source value of `type` as the destination attribute stores it: the numeric conversions lightweight
    /// migration infers, with SQLite's semantics (a real becomes an integer by truncation, a number a boolean by
    /// being non-zero).
    static func convert(_ sql: String, from type: NSAttributeType, to attribute: NSAttributeDescription) throws
        -> String
    {
        let target = attribute.attributeType
        let sourceColumn = PostgreSQLSchema.columnType(type)
        let targetColumn = PostgreSQLSchema.columnType(target)
        if sourceColumn == targetColumn { return sql }
        let numeric: Set<String> = ["bigint", "double precision", "real", "numeric"]
        switch (sourceColumn, targetColumn) {
        case ("boolean", _) where numeric.contains(targetColumn):
            return "(\(sql))::integer::\(targetColumn)"
        case (_, "boolean") where numeric.contains(sourceColumn):
            return "((\(sql)) <> 0)"
        case (_, "bigint") where numeric.contains(sourceColumn):
            return "trunc(\(sql))::bigint"
        case _ where numeric.contains(sourceColumn) && numeric.contains(targetColumn):
            return "(\(sql))::\(targetColumn)"
        default:
            throw Unsupported(
                reason: "attribute '\(attribute.name)' changes from \(sourceColumn) to \(targetColumn) values")
        }
    }

    /// The source property a destination property maps from (`NSEntityMapping._sourcePropertyName(of:)`).
    func sourcePropertyName(of name: String, in entityMapping: NSEntityMapping) throws -> String? {
        do {
            return try entityMapping._sourcePropertyName(of: name)
        } catch {
            throw Unsupported(reason: error.reason)
        }
    }

    // MARK: Core Data's tables

    /// `Z_PRIMARYKEY` with the destination's entities: each key counter carried over from the entity it migrates
    /// from, and a root's never below the largest key in its table. Rows of other tables' entities stay.
    func updatePrimaryKeys() throws {
        let table = destination.qualified("Z_PRIMARYKEY")
        var maxima: [Int64: Int64] = [:]
        let rows = try connection.query("SELECT \"Z_ENT\", \"Z_MAX\" FROM \(table)")
        for row in 0..<rows.rowCount {
            if let number = rows.int64(row, 0) { maxima[number] = rows.int64(row, 1) ?? 0 }
        }
        let numbers = Set(source.entities.map(\.number) + destination.entities.map(\.number))
        try connection.query(
            "DELETE FROM \(table) WHERE \"Z_ENT\" = ANY($1::integer[])",
            [Self.array(numbers.sorted())])
        for entity in destination.entities {
            let carried = origins[entity.number].flatMap { maxima[$0.source.number] } ?? 0
            var max = "$4::bigint"
            if entity.superNumber == 0 {
                max =
                    "GREATEST($4::bigint, (SELECT COALESCE(MAX(\"Z_PK\"), 0) FROM "
                    + "\(destination.qualified(entity.table.name))))"
            }
            try connection.query(
                "INSERT INTO \(table) (\"Z_ENT\", \"Z_NAME\", \"Z_SUPER\", \"Z_MAX\") VALUES ($1::integer, $2::text, "
                    + "$3::integer, \(max))",
                [String(entity.number), entity.entity.name ?? "", String(entity.superNumber), String(carried)])
        }
    }
}

extension PostgreSQLSchema {
    /// The mapped entity named `name`, if the schema's model has one.
    func entity(named name: String) -> PostgreSQLEntity? {
        entities.first { $0.entity.name == name }
    }
}
