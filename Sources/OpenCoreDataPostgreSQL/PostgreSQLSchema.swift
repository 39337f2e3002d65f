import Foundation
import OpenCoreDataCore

// How a model maps onto a PostgreSQL schema: Core Data's SQLite layout (see SQLiteModelMapping.swift), with
// PostgreSQL's types.
//
// - Entities are numbered from 1 (`Z_ENT`) depth-first: root entities by name, each followed by its subentities.
//   `Z_PRIMARYKEY` has one row per entity; keys are handed out from the row of the root entity, whose table the
//   keys must be unique in.
// - One table per root entity, `Z<ENTITY>`, shared by its subentities: `Z_PK`, `Z_ENT`, `Z_OPT`, then one column per
//   persistent attribute and per to-one relationship, `Z<NAME>` (numbered when names clash within the table).
// - A to-one whose destination has subentities also stores the destination's entity, `Z<n>_<NAME>`. An ordered
//   to-many whose inverse is a to-one keeps positions in `Z_FOK_<INVERSE>` in the destination table.
// - Many-to-many relationships, and to-many relationships without an inverse, live in join tables `Z_<n><NAME>`
//   with a unique pair of key columns and, for ordered sides, `Z_FOK_<column>`.
// - Types: integers of every width `bigint`, booleans `boolean`, doubles `double precision`, floats `real`,
//   decimals `numeric`, strings and URIs `text`, dates `double precision` seconds since 2001-01-01 (as Apple's
//   store keeps them, so that a date reads back to the last bit; `timestamptz` keeps microseconds only), binary and
//   transformable data `bytea`, UUIDs `uuid`.

/// The SQL identifier `name`, quoted: every table and column name goes into SQL through this. (Names are quoted for
/// every statement a fetch or fault plans: Foundation's `replacingOccurrences` runs only for the rare name that holds
/// a quote.)
func quoted(_ name: String) -> String {
    guard name.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + name + "\"" }
    return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}

/// One column of an entity's table that holds a slot of the entity.
enum PostgreSQLSlotColumn {
    case attribute(column: String, type: NSAttributeType, attribute: NSAttributeDescription)
    /// A to-one relationship: the destination's key and, if the destination has subentities, its entity number.
    case toOne(column: String, entityColumn: String?, destination: NSEntityDescription)
}

/// How a to-many relationship's destinations are found.
enum PostgreSQLToMany {
    /// Through the inverse to-one's key in the destination table (and its positions, for an ordered relationship).
    case foreignKey(table: String, column: String, orderColumn: String?)
    /// Through a join table.
    case join(
        table: String, sourceColumn: String, destinationColumn: String, orderColumn: String?, destinationTable: String)
}

final class PostgreSQLTable {
    let name: String
    let rootNumber: Int64
    /// Every column but `Z_PK`, `Z_ENT`, `Z_OPT`, with its PostgreSQL type, in order.
    var columns: [(name: String, type: String)] = [] {
        didSet {
            func list(_ alias: String) -> String {
                (["\"Z_PK\"", "\"Z_ENT\"", "\"Z_OPT\""] + columns.map { quoted($0.name) }).map { alias + "." + $0 }
                    .joined(separator: ", ")
            }
            wholeRow = (list("t0"), list("d"))
        }
    }
    /// `Z_PK`, `Z_ENT`, `Z_OPT` and every column, quoted, behind the alias a fetch gives the table (`t0`) and the one a
    /// to-many fault gives it (`d`), in the order `PostgreSQLStore.row(_:_:schema:values:)` reads them: made with the
    /// columns, as every fetch and fault of whole rows selects them.
    private(set) var wholeRow = (t0: "", d: "")
    /// Column name → position among `columns`.
    var position: [String: Int] = [:]

    init(name: String, rootNumber: Int64) {
        self.name = name
        self.rootNumber = rootNumber
    }
}

final class PostgreSQLEntity {
    let entity: NSEntityDescription
    let number: Int64
    let superNumber: Int64
    let table: PostgreSQLTable
    /// Per slot of the entity's layout: the column holding it, if any.
    var slotColumns: [PostgreSQLSlotColumn?] = []
    /// Per slot: how a to-many's destinations are found.
    var toMany: [Int: PostgreSQLToMany] = [:]
    /// The numbers of this entity and its subentities, at any depth.
    var family: [Int64] = []
    /// Slot by property name.
    var slotIndex: [String: Int] = [:]

    init(entity: NSEntityDescription, number: Int64, superNumber: Int64, table: PostgreSQLTable) {
        self.entity = entity
        self.number = number
        self.superNumber = superNumber
        self.table = table
    }
}

/// The mapping of a model's entities (those of one configuration) onto the tables of one schema.
final class PostgreSQLSchema {
    let schema: String
    let entities: [PostgreSQLEntity]
    let tables: [PostgreSQLTable]
    let joinTables: [(name: String, first: String, second: String, orderColumns: [String])]
    private let byName: [String: PostgreSQLEntity]
    private let byNumber: [Int64: PostgreSQLEntity]

    init(model: NSManagedObjectModel, configuration: String?, schema: String) {
        self.schema = schema
        let members = (configuration.flatMap { model.entities(forConfigurationName: $0) } ?? model.entities)
        let memberNames = Set(members.compactMap(\.name))
        func children(_ entity: NSEntityDescription) -> [NSEntityDescription] {
            entity.subentities.filter { memberNames.contains($0.name ?? "") }.sorted {
                ($0.name ?? "") < ($1.name ?? "")
            }
        }
        let roots = members.filter { entity in
            guard let parent = entity.superentity else { return true }
            return !memberNames.contains(parent.name ?? "")
        }.sorted { ($0.name ?? "") < ($1.name ?? "") }

        var entities: [PostgreSQLEntity] = []
        var tables: [PostgreSQLTable] = []
        for root in roots {
            let table = PostgreSQLTable(
                name: "Z" + (root.name ?? "").uppercased(), rootNumber: Int64(entities.count + 1))
            tables.append(table)
            // Depth first, iteratively: a hierarchy may be deeper than the stack allows recursion.
            var stack: [(NSEntityDescription, Int64)] = [(root, 0)]
            while let (entity, superNumber) = stack.popLast() {
                let mapped = PostgreSQLEntity(
                    entity: entity, number: Int64(entities.count + 1), superNumber: superNumber, table: table)
                entities.append(mapped)
                for child in children(entity).reversed() { stack.append((child, mapped.number)) }
            }
        }
        self.entities = entities
        self.tables = tables
        let byName = Dictionary(entities.map { ($0.entity.name ?? "", $0) }, uniquingKeysWith: { first, _ in first })
        self.byName = byName
        byNumber = Dictionary(uniqueKeysWithValues: entities.map { ($0.number, $0) })
        for mapped in entities {
            var family: [Int64] = []
            var pending = [mapped.entity]
            while let next = pending.popLast() {
                if let number = byName[next.name ?? ""]?.number { family.append(number) }
                pending += next.subentities
            }
            mapped.family = family.sorted()
        }

        // Columns: each table's entities in number order, each its own attributes, then its own to-ones.
        var columnOf: [ObjectIdentifier: String] = [:]
        var entityColumnOf: [ObjectIdentifier: String] = [:]
        for table in tables {
            var used: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
            func add(_ base: String, _ type: String) -> String {
                var name = base
                var suffix = 1
                while !used.insert(name).inserted {
                    name = base + String(suffix)
                    suffix += 1
                }
                table.position[name] = table.columns.count
                table.columns.append((name, type))
                return name
            }
            for mapped in entities where mapped.table === table {
                let inherited = Set(mapped.entity.superentity?.propertiesByName.keys.map { $0 } ?? [])
                for property in mapped.entity.properties {
                    guard !property.isTransient else { continue }
                    if inherited.contains(property.name) {
                        // A redeclared property keeps its superentity's column.
                        if let parent = mapped.entity.superentity?.propertiesByName[property.name] {
                            columnOf[ObjectIdentifier(property)] = columnOf[ObjectIdentifier(parent)]
                            entityColumnOf[ObjectIdentifier(property)] = entityColumnOf[ObjectIdentifier(parent)]
                        }
                        continue
                    }
                    if let attribute = property as? NSAttributeDescription,
                        !(property is NSDerivedAttributeDescription)
                    {
                        columnOf[ObjectIdentifier(property)] = add(
                            "Z" + property.name.uppercased(), Self.columnType(attribute.attributeType))
                    } else if let relationship = property as? NSRelationshipDescription, !relationship.isToMany {
                        let upper = relationship.name.uppercased()
                        columnOf[ObjectIdentifier(property)] = add("Z" + upper, "bigint")
                        if let destination = relationship.destinationEntity, !children(destination).isEmpty {
                            let number = byName[destination.name ?? ""]?.number ?? 0
                            entityColumnOf[ObjectIdentifier(property)] = add("Z\(number)_" + upper, "integer")
                        }
                        if let inverse = relationship.inverseRelationship, inverse.isToMany, inverse.isOrdered {
                            columnOf[ObjectIdentifier(inverse)] = add("Z_FOK_" + upper, "bigint")
                        }
                    }
                }
            }
        }

        // Join tables.
        var joinTables: [(name: String, first: String, second: String, orderColumns: [String])] = []
        var joins: [ObjectIdentifier: PostgreSQLToMany] = [:]
        func tableName(_ entity: NSEntityDescription?) -> String {
            byName[entity?.name ?? ""]?.table.name ?? ""
        }
        for mapped in entities {
            for relationship in mapped.entity.relationshipsByName.values.sorted(by: { $0.name < $1.name })
            where relationship.isToMany && !relationship.isTransient && joins[ObjectIdentifier(relationship)] == nil {
                if let inverse = relationship.inverseRelationship, !inverse.isToMany { continue }
                let inverse = relationship.inverseRelationship
                // The table is named after the side whose name sorts last, as Apple names it.
                let owner: NSRelationshipDescription
                let other: NSRelationshipDescription?
                if let inverse, inverse !== relationship, relationship.name < inverse.name {
                    owner = inverse
                    other = relationship
                } else {
                    owner = relationship
                    other = inverse === relationship ? nil : inverse
                }
                let ownerNumber = byName[owner.entity.name ?? ""]?.number ?? 0
                let destinationNumber = byName[owner.destinationEntity?.name ?? ""]?.number ?? 0
                let name = "Z_\(ownerNumber)" + owner.name.uppercased()
                let first = "Z_\(ownerNumber)" + (other?.name ?? owner.entity.name ?? "").uppercased()
                var second = "Z_\(destinationNumber)" + owner.name.uppercased()
                if second == first { second += "1" }
                let ownerOrder = owner.isOrdered ? "Z_FOK_" + second.dropFirst(2) : nil
                let otherOrder = (other?.isOrdered ?? false) ? "Z_FOK_" + first.dropFirst(2) : nil
                joins[ObjectIdentifier(owner)] = .join(
                    table: name, sourceColumn: first, destinationColumn: second, orderColumn: ownerOrder,
                    destinationTable: tableName(owner.destinationEntity))
                if let other {
                    joins[ObjectIdentifier(other)] = .join(
                        table: name, sourceColumn: second, destinationColumn: first, orderColumn: otherOrder,
                        destinationTable: tableName(owner.entity))
                }
                if !joinTables.contains(where: { $0.name == name }) {
                    joinTables.append((name, first, second, [ownerOrder, otherOrder].compactMap { $0 }))
                }
            }
        }
        self.joinTables = joinTables

        // Slots.
        for mapped in entities {
            let layout = mapped.entity._caches
            mapped.slotIndex = Dictionary(
                layout.slots.indices.map { (layout.slots[$0].name, $0) }, uniquingKeysWith: { first, _ in first })
            mapped.slotColumns = layout.slots.indices.map { index -> PostgreSQLSlotColumn? in
                let slot = layout.slots[index]
                guard slot.isPersistent else { return nil }
                switch slot.kind {
                case .attribute(let type):
                    guard let attribute = slot.property as? NSAttributeDescription,
                        let column = columnOf[ObjectIdentifier(slot.property)]
                    else { return nil }
                    return .attribute(column: column, type: type, attribute: attribute)
                case .toOne:
                    guard let relationship = slot.property as? NSRelationshipDescription,
                        let destination = relationship.destinationEntity,
                        let column = columnOf[ObjectIdentifier(slot.property)]
                    else { return nil }
                    return .toOne(
                        column: column, entityColumn: entityColumnOf[ObjectIdentifier(slot.property)],
                        destination: destination)
                case .toMany:
                    guard let relationship = slot.property as? NSRelationshipDescription else { return nil }
                    if let join = joins[ObjectIdentifier(relationship)] {
                        mapped.toMany[index] = join
                    } else if let inverse = relationship.inverseRelationship,
                        let column = columnOf[ObjectIdentifier(inverse)]
                    {
                        mapped.toMany[index] = .foreignKey(
                            table: tableName(relationship.destinationEntity), column: column,
                            orderColumn: columnOf[ObjectIdentifier(relationship)].flatMap {
                                $0.hasPrefix("Z_FOK_") ? $0 : nil
                            })
                    }
                    return nil
                case .fetched, .derived:
                    return nil
                }
            }
        }
    }

    func entity(_ entity: NSEntityDescription) -> PostgreSQLEntity? {
        guard let mapped = byName[entity.name ?? ""], mapped.entity === entity || mapped.entity.name == entity.name
        else { return nil }
        return mapped
    }

    func entity(number: Int64) -> PostgreSQLEntity? { byNumber[number] }

    /// `schema.table`, quoted.
    func qualified(_ table: String) -> String { quoted(schema) + "." + quoted(table) }

    static func columnType(_ type: NSAttributeType) -> String {
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType: return "bigint"
        case .booleanAttributeType: return "boolean"
        case .doubleAttributeType, .dateAttributeType: return "double precision"
        case .floatAttributeType: return "real"
        case .decimalAttributeType: return "numeric"
        case .stringAttributeType, .URIAttributeType, .objectIDAttributeType: return "text"
        case .UUIDAttributeType: return "uuid"
        default: return "bytea"
        }
    }

    // MARK: Definitions

    /// The statements that create the schema's tables, for a new store.
    var createStatements: [String] {
        var statements = ["CREATE SCHEMA IF NOT EXISTS \(quoted(schema))"]
        for table in tables {
            let columns =
                ["\"Z_PK\" bigint PRIMARY KEY", "\"Z_ENT\" integer NOT NULL", "\"Z_OPT\" bigint NOT NULL"]
                + table.columns.map { "\(quoted($0.name)) \($0.type)" }
            statements.append("CREATE TABLE \(qualified(table.name)) (\(columns.joined(separator: ", ")))")
            statements.append("CREATE INDEX ON \(qualified(table.name)) (\"Z_ENT\")")
        }
        // Foreign keys, which to-many relationships are read through.
        var indexed = Set<String>()
        for mapped in entities {
            for case .toOne(let column, _, _)? in mapped.slotColumns
            where indexed.insert(mapped.table.name + "." + column).inserted {
                statements.append("CREATE INDEX ON \(qualified(mapped.table.name)) (\(quoted(column)))")
            }
        }
        statements += indexStatements
        for join in joinTables {
            var columns = ["\(quoted(join.first)) bigint NOT NULL", "\(quoted(join.second)) bigint NOT NULL"]
            columns += join.orderColumns.map { "\(quoted($0)) bigint" }
            columns.append("PRIMARY KEY (\(quoted(join.first)), \(quoted(join.second)))")
            statements.append("CREATE TABLE \(qualified(join.name)) (\(columns.joined(separator: ", ")))")
            statements.append("CREATE INDEX ON \(qualified(join.name)) (\(quoted(join.second)))")
        }
        statements.append(
            """
            CREATE TABLE \(qualified("Z_PRIMARYKEY")) ("Z_ENT" integer PRIMARY KEY, "Z_NAME" text, \
            "Z_SUPER" integer, "Z_MAX" bigint NOT NULL)
            """)
        statements.append(
            """
            CREATE TABLE \(qualified("Z_METADATA")) ("Z_VERSION" integer PRIMARY KEY, "Z_UUID" text, \
            "Z_PLIST" bytea)
            """)
        return statements
    }

    /// The column of a property of `entity` that an index can name (an attribute or a to-one), if any.
    private func indexColumn(_ name: String, of entity: PostgreSQLEntity) -> String? {
        switch entity.slotIndex[name].flatMap({ entity.slotColumns[$0] }) {
        case .attribute(let column, _, _)?: return column
        case .toOne(let column, _, _)?: return column
        case nil: return nil
        }
    }

    /// Uniqueness constraints as unique indexes, so that two processes racing cannot both save a value (the context
    /// checks before saving, but only against what is saved already), and fetch indexes as indexes. Each covers
    /// the rows of its entity and subentities in the shared table.
    private var indexStatements: [String] {
        var statements: [String] = []
        for mapped in entities {
            let family = mapped.family.map(String.init).joined(separator: ", ")
            let rows =
                mapped.family.count == entities.filter({ $0.table === mapped.table }).count
                ? "" : " WHERE \"Z_ENT\" IN (\(family))"
            for constraint in mapped.entity.uniquenessConstraints {
                let names = constraint.compactMap { ($0 as? String) ?? ($0 as? NSPropertyDescription)?.name }
                let columns = names.compactMap { indexColumn($0, of: mapped) }
                guard !columns.isEmpty, columns.count == names.count else { continue }
                statements.append(
                    "CREATE UNIQUE INDEX ON \(qualified(mapped.table.name)) (\(columns.map(quoted).joined(separator: ", ")))"
                        + rows)
            }
            for index in mapped.entity.indexes {
                let columns = index.elements.compactMap { element -> String? in
                    guard let name = element.propertyName, let column = indexColumn(name, of: mapped) else {
                        return nil
                    }
                    return quoted(column) + (element.isAscending ? "" : " DESC")
                }
                guard !columns.isEmpty, columns.count == index.elements.count else { continue }
                statements.append(
                    "CREATE INDEX ON \(qualified(mapped.table.name)) (\(columns.joined(separator: ", ")))" + rows)
            }
        }
        return statements
    }

    /// The first identifier longer than PostgreSQL keeps, if any: it would be cut, and could become another's name.
    var overlongIdentifier: String? {
        let names =
            tables.map(\.name) + tables.flatMap { $0.columns.map(\.name) }
            + joinTables.flatMap { [$0.name, $0.first, $0.second] + $0.orderColumns }
        return names.first { $0.utf8.count > PostgreSQLConfiguration.maximumIdentifierLength }
    }
}
