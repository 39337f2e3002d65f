import CSQLite
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Lightweight migration of a SQLite store in place, with SQL only, as Apple's framework does for an inferred
// mapping model: no object is loaded, so a table migrates at the speed of SQLite copying it.
//
// Everything happens in one transaction, in whatever journal mode the file has: tables whose definition and rows
// stay the same are kept; every other table of the source model is renamed aside, its destination table created with
// the exact CREATE statement of a new store (so that the schema is Apple's, column order included) and filled with
// one INSERT … SELECT — entity numbers renumbered, columns renamed or converted, defaults filled, relationships moved
// between foreign keys and join tables — and the renamed tables dropped. Then indexes and triggers, Z_PRIMARYKEY,
// Z_METADATA (the new version hashes) and Z_MODELCACHE (the new model). Primary keys never change, so object IDs
// survive the migration. Anything failing rolls the transaction back: the file is left byte for byte as it was.
//
// A mapping that does more than copy source properties into destination properties is not migrated here
// (`Unsupported`); the caller migrates it object by object instead. Identifiers are quoted in every statement built
// here; the CREATE statements are the store's own (Apple writes them unquoted, and `sqlite_master` keeps the text).

struct SQLiteLightweightMigration {
    /// What the in-place migration does not do; the object-by-object migration does it instead.
    struct Unsupported: Error, CustomStringConvertible {
        let description: String
    }

    /// For tests: the migration of the store at a path fails after that many statements, as a full disk would stop
    /// it.
    static let injectedFailures = LockedState<[String: Int]>([:])
    /// For tests: the process is killed (SIGKILL) after that many statements of the migration of the store at a path.
    static let injectedKills = LockedState<[String: Int]>([:])

    let connection: SQLiteConnection
    let url: URL
    let sourceModel: NSManagedObjectModel
    let destinationModel: NSManagedObjectModel
    let mapping: NSMappingModel
    let source: SQLiteModelMapping
    let destination: SQLiteModelMapping
    var executed = 0
    let failAfter: Int?
    let killAfter: Int?
    /// The current name of each source table: renamed aside while its destination table is built.
    var currentName: [String: String] = [:]
    /// Each destination entity number with the source entity and entity mapping it migrates from.
    var origins: [Int64: (source: SQLiteEntityMapping, mapping: NSEntityMapping)] = [:]

    /// Migrates the SQLite store at `url` from `sourceModel` to `destinationModel` in place. Throws `Unsupported`
    /// (having written nothing) when the mapping needs the object-by-object migration.
    static func migrate(
        storeAt url: URL, configuration: String?, sourceModel: NSManagedObjectModel,
        destinationModel: NSManagedObjectModel, mapping: NSMappingModel, timeout: Double
    ) throws {
        let connection = try NSSQLiteStore._connect(url, readOnly: false, create: false, timeout: timeout)
        defer { connection.close() }
        // The rows keep the source store's entity numbers until they move; the destination is numbered anew.
        let sourceNumbers = try SQLiteModelMapping.storeNumbering(
            of: connection, model: sourceModel,
            configuration: sourceModel.entities(forConfigurationName: configuration) == nil ? nil : configuration,
            url: url)
        var migration = SQLiteLightweightMigration(
            connection: connection, url: url, sourceModel: sourceModel, destinationModel: destinationModel,
            mapping: mapping, configuration: configuration, sourceNumbers: sourceNumbers)
        try migration.run()
    }

    init(
        connection: SQLiteConnection, url: URL, sourceModel: NSManagedObjectModel,
        destinationModel: NSManagedObjectModel, mapping: NSMappingModel, configuration: String?,
        sourceNumbers: [String: Int64]
    ) {
        self.connection = connection
        self.url = url
        self.sourceModel = sourceModel
        self.destinationModel = destinationModel
        self.mapping = mapping
        func known(_ model: NSManagedObjectModel) -> String? {
            model.entities(forConfigurationName: configuration) == nil ? nil : configuration
        }
        source = SQLiteModelMapping(
            model: sourceModel, configuration: known(sourceModel), storeNumbers: sourceNumbers)
        destination = SQLiteModelMapping(model: destinationModel, configuration: known(destinationModel))
        failAfter = Self.injectedFailures.withLock { $0[url.standardizedFileURL.path] }
        killAfter = Self.injectedKills.withLock { $0[url.standardizedFileURL.path] }
    }

    mutating func run() throws {
        try destination.checkIdentifiers(url: url)
        if let problem = try source.structuralMismatch(in: connection) {
            throw Unsupported(description: "the store's tables do not match its model: \(problem)")
        }
        for entityMapping in mapping._entityMappings {
            guard let destinationName = entityMapping.destinationEntityName,
                let sourceName = entityMapping.sourceEntityName,
                let to = destinationModel.entitiesByName[destinationName].flatMap(destination.entity),
                let from = sourceModel.entitiesByName[sourceName].flatMap(source.entity)
            else { continue }
            origins[to.number] = (from, entityMapping)
        }
        let plan = try makePlan()
        try connection.transaction(immediate: true) {
            try execute(plan)
            try migrateHistory()
        }
    }

    // MARK: The plan

    /// The statements of the migration, in order, each with its bound values.
    struct Plan {
        var statements: [(sql: String, bindings: [SQLiteValue])] = []
        mutating func add(_ sql: String, _ bindings: [SQLiteValue] = []) { statements.append((sql, bindings)) }
    }

    mutating func makePlan() throws -> Plan {
        let existing = try schemaObjects()
        var plan = Plan()
        let sourceTables = Set(source.tables.map(\.name) + source.joinTables.map(\.name))

        // Which destination tables stay as they are: planned once with every table where it is.
        for name in sourceTables { currentName[name] = name }
        var kept = Set<String>()
        for table in destination.tables where try tablePlan(for: table, existing: existing).isUnchanged {
            kept.insert(table.name)
        }
        for join in destination.joinTables where try joinPlan(for: join, existing: existing).isUnchanged {
            kept.insert(join.name)
        }

        // 1. Triggers go first: they name the tables about to move.
        for trigger in existing.triggers where sourceTables.contains(trigger.table) {
            plan.add("DROP TRIGGER IF EXISTS \(Self.quote(trigger.name))")
        }
        // 2. Every source table that is not kept moves aside.
        var taken = existing.tableNames
        for name in sourceTables.sorted() where !kept.contains(name) && existing.tableNames.contains(name) {
            var aside = "Z_MIGRATING_" + name
            while taken.contains(aside) { aside += "_" }
            taken.insert(aside)
            plan.add("ALTER TABLE \(Self.quote(name)) RENAME TO \(Self.quote(aside))")
            currentName[name] = aside
        }
        // 3. The destination tables, created as a new store creates them and filled from their source (planned
        // again, now that the source tables they read have their new names).
        var postpasses: [(String, [SQLiteValue])] = []
        for table in destination.tables where !kept.contains(table.name) {
            let tablePlan = try self.tablePlan(for: table, existing: existing)
            plan.add(SQLiteModelMapping.createStatement(for: table))
            if let fill = try fillStatement(tablePlan) { plan.add(fill.sql, fill.bindings) }
            postpasses += try self.postpasses(tablePlan)
        }
        for join in destination.joinTables where !kept.contains(join.name) {
            plan.add(SQLiteModelMapping.createStatement(for: join))
            if let fill = try joinPlan(for: join, existing: existing).fill { plan.add(fill) }
        }
        for (sql, bindings) in postpasses { plan.add(sql, bindings) }
        // 4. The source tables that moved aside go.
        for name in sourceTables.sorted() where currentName[name] != name {
            plan.add("DROP TABLE \(Self.quote(currentName[name]!))")
        }
        // 5. Indexes and triggers as a new store has them.
        let wanted = Set(destination.indexStatements)
        for index in existing.indexes where kept.contains(index.table) && !wanted.contains(index.sql) {
            plan.add("DROP INDEX IF EXISTS \(Self.quote(index.name))")
        }
        let keptIndexes = Set(existing.indexes.filter { kept.contains($0.table) }.map(\.sql))
        for statement in destination.indexStatements where !keptIndexes.contains(statement) {
            plan.add(statement)
        }
        for statement in destination.triggerStatements { plan.add(statement) }
        for count in destination.derivedCounts {
            plan.add(
                "UPDATE \(Self.quote(count.sourceTable)) SET \(Self.quote(count.sourceColumn)) = (SELECT COUNT(*) FROM "
                    + "\(Self.quote(count.destinationTable)) d WHERE d.\(Self.quote(count.foreignKey)) = "
                    + "\(Self.quote(count.sourceTable)).Z_PK)")
        }
        // 6. Core Data's own tables.
        try addBookkeeping(to: &plan, existing: existing)
        return plan
    }

    mutating func execute(_ plan: Plan) throws {
        for (sql, bindings) in plan.statements {
            if let failAfter, executed >= failAfter {
                throw SQLiteError(code: SQLITE_IOERR, message: "injected failure after \(executed) statements")
            }
            if let killAfter, executed >= killAfter { kill(getpid(), SIGKILL) }
            if bindings.isEmpty {
                try connection.execute(sql)
            } else {
                if SQLiteStatementLog.isRecording { SQLiteStatementLog.record(sql) }
                let statement = try connection.prepare(sql)
                defer { statement.finalize() }
                try statement.run(bindings)
            }
            executed += 1
        }
        try SQLiteModelCache.write(destinationModel, to: connection)
    }

    // MARK: Entity tables

    /// How one destination table is made: the source table it is filled from (none for new entities), its members
    /// with the source entities they migrate from, and whether it is the source table unchanged.
    struct TablePlan {
        let table: SQLiteTable
        let sourceTable: SQLiteTable?
        let members: [(destination: SQLiteEntityMapping, source: SQLiteEntityMapping, mapping: NSEntityMapping)]
        var columns: [(sql: String, bindings: [SQLiteValue])] = []
        var isUnchanged = false
    }

    func tablePlan(for table: SQLiteTable, existing: SchemaObjects) throws -> TablePlan {
        let members = destination.entities.filter { $0.table === table }.compactMap { entity in
            origins[entity.number].map { (destination: entity, source: $0.source, mapping: $0.mapping) }
        }
        let sourceTables = Set(members.map { ObjectIdentifier($0.source.table) })
        guard sourceTables.count <= 1 else {
            throw Unsupported(description: "table \(table.name) would gather rows of several source tables")
        }
        var plan = TablePlan(table: table, sourceTable: members.first?.source.table, members: members)
        guard let sourceTable = plan.sourceTable else { return plan }
        plan.columns = try table.columns.map { try columnValue($0, in: plan) }
        let allRowsMapped =
            Set(source.entities.filter { $0.table === sourceTable }.map(\.number))
            == Set(members.map(\.source.number))
        plan.isUnchanged =
            allRowsMapped && table.name == sourceTable.name
            && existing.tableSQL[sourceTable.name] == SQLiteModelMapping.createStatement(for: table)
            && members.allSatisfy { $0.destination.number == $0.source.number }
            && zip(table.columns, plan.columns).allSatisfy { column, value in
                value.bindings.isEmpty && value.sql == "t." + Self.quote(column.name)
            }
        return plan
    }

    func fillStatement(_ plan: TablePlan) throws -> (sql: String, bindings: [SQLiteValue])? {
        guard let sourceTable = plan.sourceTable, let from = currentName[sourceTable.name] else { return nil }
        var renumber = "t.Z_ENT"
        if plan.members.contains(where: { $0.destination.number != $0.source.number }) {
            renumber =
                "CASE t.Z_ENT "
                + plan.members.map { "WHEN \($0.source.number) THEN \($0.destination.number)" }.joined(separator: " ")
                + " END"
        }
        let names = ["Z_PK", "Z_ENT", "Z_OPT"] + plan.table.columns.map(\.name)
        let values = ["t.Z_PK", renumber, "t.Z_OPT"] + plan.columns.map(\.sql)
        let numbers = plan.members.map { String($0.source.number) }.joined(separator: ", ")
        let sql =
            "INSERT INTO \(Self.quote(plan.table.name)) (\(names.map(Self.quote).joined(separator: ", "))) SELECT "
            + values.joined(separator: ", ") + " FROM \(Self.quote(from)) t WHERE t.Z_ENT IN (\(numbers))"
        return (sql, plan.columns.flatMap(\.bindings))
    }

    /// The SQL of one column's value for a row `t` of the source table.
    func columnValue(_ column: SQLiteColumn, in plan: TablePlan) throws -> (
        sql: String, bindings: [SQLiteValue]
    ) {
        switch column.role {
        case .attribute(let attribute):
            var cases: [(numbers: [Int64], sql: String, bindings: [SQLiteValue])] = []
            for member in plan.members where member.destination.entity.isKindOf(entity: attribute._entity!) {
                let value = try attributeValue(attribute, member.source, member.mapping)
                cases.append(([member.source.number], value.sql, value.bindings))
            }
            return Self.combine(cases)
        case .foreignKey(let relationship):
            guard let pairs = try pairs(forDestination: relationship, of: plan.members) else { return ("NULL", []) }
            if pairs.table == currentName[plan.sourceTable!.name], pairs.source == "Z_PK" {
                return ("t." + Self.quote(pairs.destination), [])
            }
            return (
                "(SELECT p.\(Self.quote(pairs.destination)) FROM \(Self.quote(pairs.table)) p WHERE "
                    + "p.\(Self.quote(pairs.source)) = t.Z_PK\(pairs.filter) ORDER BY p.\(Self.quote(pairs.destination)) "
                    + "LIMIT 1)", []
            )
        case .foreignEntity:
            return ("NULL", [])
        case .order(let toMany):
            // Positions carry over when the source relationship kept them in this very table.
            if let pairs = try pairs(forDestination: toMany, of: nil), let order = pairs.order,
                pairs.table == currentName[plan.sourceTable!.name], pairs.destination == "Z_PK"
            {
                return ("t." + Self.quote(order), [])
            }
            return ("NULL", [])
        }
    }

    /// Per source entity values, as one expression: the common one, or a CASE on the row's entity.
    static func combine(_ cases: [(numbers: [Int64], sql: String, bindings: [SQLiteValue])])
        -> (sql: String, bindings: [SQLiteValue])
    {
        guard let first = cases.first else { return ("NULL", []) }
        if cases.allSatisfy({ $0.sql == first.sql && $0.bindings == first.bindings }) {
            return (first.sql, first.bindings)
        }
        var sql = "CASE t.Z_ENT"
        var bindings: [SQLiteValue] = []
        for entry in cases {
            sql += " WHEN \(entry.numbers[0]) THEN \(entry.sql)"
            bindings += entry.bindings
        }
        return (sql + " END", bindings)
    }

    /// An attribute's value: the source attribute's column it maps from, converted to its type, or its default.
    func attributeValue(
        _ attribute: NSAttributeDescription, _ from: SQLiteEntityMapping, _ entityMapping: NSEntityMapping
    ) throws -> (sql: String, bindings: [SQLiteValue]) {
        var sql = "NULL"
        var mapped = false
        if attribute is NSDerivedAttributeDescription {
            // Derived values are the store's own; one the source derived the same way carries over.
            if let match = from.entity._caches.attributesByName[attribute._name] as? NSDerivedAttributeDescription,
                match._derivationExpression == (attribute as? NSDerivedAttributeDescription)?._derivationExpression,
                let column = source.columnName(of: match._name, in: from)
            {
                sql = "t." + Self.quote(column)
            }
            return (sql, [])
        }
        if let name = try sourcePropertyName(of: attribute._name, in: entityMapping) {
            guard let sourceAttribute = from.entity._caches.attributesByName[name],
                let column = source.columnName(of: name, in: from)
            else {
                throw Unsupported(
                    description: "attribute '\(attribute._name)' maps from '\(name)', which has no column")
            }
            sql = try Self.convert("t." + Self.quote(column), from: sourceAttribute._attributeType, to: attribute)
            mapped = true
        }
        if let value = attribute._defaultValue, !mapped || !attribute._isOptional,
            let stored = StoredValue.attributeValue(value, type: attribute._attributeType),
            let bound = try? SQLiteValueCoding.sqliteValue(
                stored, type: attribute._attributeType, attribute: attribute),
            bound != .null
        {
            return (mapped ? "COALESCE(\(sql), ?)" : "?", [bound])
        }
        return (sql, [])
    }

    /// A source value of `type` as the destination attribute stores it.
    static func convert(_ sql: String, from type: NSAttributeType, to attribute: NSAttributeDescription)
        throws -> String
    {
        let target = attribute._attributeType
        if type == target { return sql }
        let integers: Set<NSAttributeType> = [
            .integer16AttributeType, .integer32AttributeType, .integer64AttributeType,
        ]
        let reals: Set<NSAttributeType> = [.doubleAttributeType, .floatAttributeType]
        switch target {
        case _ where integers.contains(target) && (integers.contains(type) || type == .booleanAttributeType):
            return sql
        case _ where integers.contains(target) && reals.contains(type):
            return "CAST(\(sql) AS INTEGER)"
        case .booleanAttributeType where integers.contains(type) || reals.contains(type):
            return "(CASE WHEN \(sql) IS NULL THEN NULL WHEN \(sql) != 0 THEN 1 ELSE 0 END)"
        case _ where reals.contains(target) && (reals.contains(type) || integers.contains(type)):
            return "CAST(\(sql) AS REAL)"
        case .binaryDataAttributeType where type == .transformableAttributeType,
            .transformableAttributeType where type == .binaryDataAttributeType:
            return sql
        default:
            throw Unsupported(
                description: "attribute '\(attribute._name)' changes from \(type.modelEditorName) to "
                    + target.modelEditorName)
        }
    }

    /// The source property a destination property maps from (`NSEntityMapping._sourcePropertyName(of:)`).
    func sourcePropertyName(of name: String, in entityMapping: NSEntityMapping) throws -> String? {
        do {
            return try entityMapping._sourcePropertyName(of: name)
        } catch {
            throw Unsupported(description: error.reason)
        }
    }

    // MARK: Core Data's tables

    func addBookkeeping(to plan: inout Plan, existing: SchemaObjects) throws {
        var maxima: [Int64: Int64] = [:]
        for row in try SQLiteStoreMetadata.entityRows(connection) { maxima[row.number] = row.max }
        plan.add("DELETE FROM Z_PRIMARYKEY WHERE Z_ENT < \(SQLiteModelMapping.firstInternalEntityNumber)")
        for entity in destination.entities {
            let carried = origins[entity.number].flatMap { maxima[$0.source.number] } ?? 0
            var max = "?"
            if entity.superNumber == 0 {
                max = "MAX(?, IFNULL((SELECT MAX(Z_PK) FROM \(Self.quote(entity.table.name))), 0))"
            }
            plan.add(
                "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, \(max))",
                [.integer(entity.number), .text(entity.name), .integer(entity.superNumber), .integer(carried)])
        }
        var metadata = try SQLiteStoreMetadata.read(connection).metadata
        let hashes = destinationModel.entityVersionHashesByName
        metadata[NSStoreModelVersionHashesKey] = hashes
        metadata[NSStoreModelVersionIdentifiersKey] = Array(destinationModel.versionIdentifiers)
        metadata[NSStoreModelVersionHashesVersionKey] = 3
        metadata[NSPersistenceFrameworkVersionKey] = OpenCoreDataFrameworkVersion
        if metadata[NSStoreModelVersionChecksumKey] != nil {
            metadata[NSStoreModelVersionChecksumKey] = destinationModel.versionChecksum
        }
        if metadata["NSStoreModelVersionHashesDigest"] != nil {
            metadata["NSStoreModelVersionHashesDigest"] = ModelVersionHasher.versionHashesDigest(of: hashes)
        }
        let uuid = metadata[NSStoreUUIDKey] as? String ?? UUID().uuidString
        plan.add(
            "INSERT OR REPLACE INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (?, ?, ?)",
            [.integer(SQLiteStoreMetadata.formatVersion), .text(uuid), .blob(try SQLiteStoreMetadata.encode(metadata))])
        if !existing.tableNames.contains("Z_MODELCACHE") { plan.add(SQLiteModelCache.tableSQL) }
        plan.add("DELETE FROM Z_MODELCACHE")
    }

    // MARK: The schema as it is

    struct SchemaObjects {
        var tableNames = Set<String>()
        var tableSQL: [String: String] = [:]
        var indexes: [(name: String, table: String, sql: String)] = []
        var triggers: [(name: String, table: String)] = []
    }

    func schemaObjects() throws -> SchemaObjects {
        var objects = SchemaObjects()
        let statement = try connection.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master")
        defer { statement.finalize() }
        while try statement.step() {
            let name = statement.text(1)
            let table = statement.text(2)
            let sql = statement.textIfNotNull(3)
            switch statement.text(0) {
            case "table":
                objects.tableNames.insert(name)
                if let sql { objects.tableSQL[name] = sql }
            case "index":
                if let sql { objects.indexes.append((name, table, sql)) }
            case "trigger":
                objects.triggers.append((name, table))
            default:
                break
            }
        }
        return objects
    }

    /// `name` as a quoted SQL identifier.
    static func quote(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
