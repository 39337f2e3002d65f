// The SQL that creates a store's schema, spelled exactly as Apple's framework spells it (sqlite_master keeps the text
// of each CREATE statement, so the spelling is part of the format).

extension SQLiteModelMapping {
    static let primaryKeyTableSQL =
        "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)"
    static let metadataTableSQL =
        "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)"

    /// The statements that create the schema of a new store: entity tables, join tables, indexes, derived-attribute
    /// triggers, then Core Data's own tables (the model cache last, as Apple's framework creates it).
    var createStatements: [String] {
        var statements = tables.map(Self.createStatement(for:)) + joinTables.map(Self.createStatement(for:))
        statements += indexStatements
        statements += triggerStatements
        statements.append(Self.primaryKeyTableSQL)
        statements.append(Self.metadataTableSQL)
        statements.append(SQLiteModelCache.tableSQL)
        return statements
    }

    /// The CREATE TABLE statement of an entity table.
    static func createStatement(for table: SQLiteTable) -> String {
        let columns =
            ["Z_PK INTEGER PRIMARY KEY", "Z_ENT INTEGER", "Z_OPT INTEGER"]
            + table.columns.map { "\($0.name) \($0.type.rawValue)" }
        return "CREATE TABLE \(table.name) ( \(columns.joined(separator: ", ")) )"
    }

    /// The CREATE TABLE statement of a join table.
    static func createStatement(for join: SQLiteJoinTable) -> String {
        let columns =
            ["\(join.firstColumn) INTEGER", "\(join.secondColumn) INTEGER"]
            + join.orderColumns.map { "\($0) INTEGER" }
        return "CREATE TABLE \(join.name) ( \(columns.joined(separator: ", ")), PRIMARY KEY (\(join.firstColumn), "
            + "\(join.secondColumn)) )"
    }

    /// Indexes: to-one foreign keys, `Z_ENT` of shared tables, indexed attributes, join tables' second keys, fetch
    /// indexes and uniqueness constraints.
    var indexStatements: [String] {
        var statements: [String] = []
        for table in tables {
            for column in table.columns {
                switch column.role {
                case .foreignKey:
                    statements.append(
                        "CREATE INDEX \(table.name)_\(column.name)_INDEX ON \(table.name) (\(column.name))")
                case .attribute(let attribute) where attribute._isIndexed:
                    statements.append(
                        "CREATE INDEX \(table.name)_\(column.name)_INDEX ON \(table.name) (\(column.name))")
                default:
                    break
                }
            }
            if table.isShared {
                statements.append("CREATE INDEX \(table.name)_Z_ENT_INDEX ON \(table.name) (Z_ENT)")
            }
        }
        for join in joinTables {
            statements.append(
                "CREATE INDEX \(join.name)_\(join.secondColumn)_INDEX ON \(join.name) (\(join.secondColumn), "
                    + "\(join.firstColumn))")
        }
        for mapping in entities {
            for index in mapping.entity._indexes {
                guard index._partialIndexPredicate == nil,
                    !index._elements.isEmpty,
                    index._elements.allSatisfy({ $0._collationType == .binary })
                else { continue }
                let columns = index._elements.compactMap { element -> String? in
                    guard let name = element.propertyName, let column = columnName(of: name, in: mapping) else {
                        return nil
                    }
                    return "\(column) COLLATE BINARY \(element._isAscending ? "ASC" : "DESC")"
                }
                guard columns.count == index._elements.count else { continue }
                statements.append(
                    "CREATE INDEX Z_\(mapping.name)_\(index._name) ON \(mapping.table.name) "
                        + "(\(columns.joined(separator: ", ")))")
            }
            for constraint in mapping.entity._uniquenessConstraints {
                let names = constraint.compactMap { element -> String? in
                    if let name = element as? String { return name }
                    return (element as? NSPropertyDescription)?._name
                }
                let columns = names.compactMap { columnName(of: $0, in: mapping) }
                guard !names.isEmpty, columns.count == names.count else { continue }
                statements.append(
                    "CREATE UNIQUE INDEX Z_\(mapping.name)_UNIQUE_\(names.joined(separator: "_")) ON "
                        + "\(mapping.table.name) (\(columns.map { "\($0) COLLATE BINARY ASC" }.joined(separator: ", ")))"
                )
            }
        }
        return statements
    }

    /// The column that stores the attribute or to-one relationship `name` of `mapping`'s entity.
    func columnName(of name: String, in mapping: SQLiteEntityMapping) -> String? {
        guard let slot = mapping.entity._caches.slotByName[name], slot < mapping.slots.count else { return nil }
        switch mapping.slots[slot] {
        case .attribute(let column, _, _), .derived(let column, _, _):
            return mapping.table.columns[column].name
        case .toOne(let foreignKey, _, _):
            return mapping.table.columns[foreignKey].name
        case .none, .toMany:
            return nil
        }
    }

    /// Apple's triggers for `to-many.@count` derived attributes: the count follows the destinations' foreign keys.
    var triggerStatements: [String] {
        var statements: [String] = []
        for count in derivedCounts {
            let prefix = "Z_DA_\(count.destinationTable)_\(count.entityName)_\(count.attributeName)"
            let source = count.sourceTable
            let column = count.sourceColumn
            let key = count.foreignKey
            func report(_ row: String, insert: Bool = false) -> String {
                "SELECT NSCoreDataDATrigger\(insert ? "Insert" : "")UpdatedAffectedObjectValue('\(source)', Z_ENT, "
                    + "Z_PK, '\(count.attributeName)', \(column)) FROM \(source) WHERE Z_PK = \(row);"
            }
            statements.append(
                "CREATE TRIGGER \(prefix)_PARAMETER_INSERT AFTER INSERT ON \(count.destinationTable) FOR EACH ROW "
                    + "WHEN (NEW.\(key) NOT NULL) BEGIN UPDATE \(source) SET \(column) = IFNULL(\(column), 0) + 1 "
                    + "WHERE Z_PK = NEW.\(key); \(report("NEW.\(key)")) END")
            statements.append(
                "CREATE TRIGGER \(prefix)_PARAMETER_UPDATE_INCREMENT AFTER UPDATE OF \(key) ON "
                    + "\(count.destinationTable) FOR EACH ROW WHEN (NEW.\(key) NOT NULL) BEGIN UPDATE \(source) SET "
                    + "\(column) = \(column) + 1 WHERE Z_PK = NEW.\(key); \(report("NEW.\(key)")) END")
            statements.append(
                "CREATE TRIGGER \(prefix)_PARAMETER_UPDATE_DECREMENT AFTER UPDATE OF \(key) ON "
                    + "\(count.destinationTable) FOR EACH ROW WHEN (OLD.\(key) NOT NULL) BEGIN UPDATE \(source) SET "
                    + "\(column) = \(column) - 1 WHERE Z_PK = OLD.\(key); \(report("OLD.\(key)")) END")
            statements.append(
                "CREATE TRIGGER \(prefix)_PARAMETER_DELETE AFTER DELETE ON \(count.destinationTable) FOR EACH ROW "
                    + "WHEN (OLD.\(key) NOT NULL) BEGIN UPDATE \(source) SET \(column) = \(column) - 1 WHERE "
                    + "Z_PK = OLD.\(key); \(report("OLD.\(key)")) END")
            statements.append(
                "CREATE TRIGGER Z_DA_\(source)_\(count.entityName)_\(count.attributeName)_SOURCE_INSERT AFTER "
                    + "INSERT ON \(source) FOR EACH ROW BEGIN UPDATE \(source) SET \(column) = (SELECT "
                    + "IFNULL(COUNT(\(key)), 0) FROM \(count.destinationTable) WHERE \(key) = NEW.Z_PK) WHERE "
                    + "Z_PK = NEW.Z_PK; \(report("NEW.Z_PK", insert: true)) END")
        }
        return statements
    }
}
