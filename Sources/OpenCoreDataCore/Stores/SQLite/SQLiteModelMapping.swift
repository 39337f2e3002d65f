import Foundation

// How a model maps onto Core Data's SQLite layout, as Apple's framework writes it (the stores in shared/corpus are
// the reference):
//
// - Entities are numbered from 1 (`Z_ENT`) depth-first: root entities by name, each followed by its subentities,
//   siblings by name. `Z_PRIMARYKEY` has one row per entity (`Z_SUPER` = the superentity's number). That is how a
//   new store is numbered; an existing store keeps the numbers its `Z_PRIMARYKEY` gives, whatever their order
//   (`SQLiteModelMapping+StoreNumbering.swift`), and so do the names that embed numbers below.
// - One table per root entity, `Z<ENTITY>`, shared by its subentities: `Z_PK`, `Z_ENT` (the row's entity), `Z_OPT`
//   (the row version), then one column per persistent attribute (derived ones included) and per to-one
//   relationship, named `Z<NAME>` and numbered `Z<NAME>1`, `Z<NAME>2`… when names clash within the table. Entities
//   contribute in number order, each its attributes then its to-one relationships, in model order; the columns are
//   then ordered by type: INTEGER, then TIMESTAMP and FLOAT, DECIMAL, VARCHAR, BLOB.
// - A to-one whose destination has subentities also stores the destination's entity, `Z<n>_<NAME>` (n = the
//   destination's number). An ordered to-many whose inverse is a to-one keeps positions in `Z_FOK_<INVERSE>` in
//   the destination table.
// - A many-to-many relationship lives in a join table `Z_<n><NAME>`, named after the relationship whose name sorts
//   last (n = its entity's number), with columns `Z_<n><INVERSE>` and `Z_<m><NAME>` and, for ordered sides,
//   `Z_FOK_<column>`.

/// A derived attribute Apple keeps up to date with triggers (`<to-many>.@count`).
struct SQLiteDerivedCount {
    let entityName: String
    let attributeName: String
    let sourceTable: String
    let sourceColumn: String
    let destinationTable: String
    let foreignKey: String
}

/// The whole mapping of a model (or of one configuration) onto a store.
final class SQLiteModelMapping {
    let entities: [SQLiteEntityMapping]
    let tables: [SQLiteTable]
    let joinTables: [SQLiteJoinTable]
    let derivedCounts: [SQLiteDerivedCount]
    /// A many-to-many relationship whose join table would be another one's (see `identifierProblem()`).
    let sharedJoinTable: (entity: String, relationship: String, table: String)?
    private let byName: [String: SQLiteEntityMapping]
    /// The mappings by entity number (`Z_ENT`), which every fetched row names: numbers are small and dense, so an
    /// array indexed by them.
    private let byNumber: [SQLiteEntityMapping?]
    /// The mappings by the identity of the model's own entity descriptions: the common case, without hashing a
    /// name. The mapping keeps those descriptions alive, so an identifier here cannot come to name another one.
    private let byIdentity: [ObjectKey: SQLiteEntityMapping]
    /// `joinColumns(holdingKeysOf:)` of every table, by table name.
    private var joinColumnsByTable: [String: [(table: String, column: String)]] = [:]
    /// The join of each to-many relationship stored in a join table, by relationship.
    private let joins: [ObjectIdentifier: SQLiteJoin]
    /// The entity numbers in depth-first order, where each entity's subentities follow it (see `kindNumbers`).
    let numbersInOrder: [Int64]

    /// The mapping of `configuration`'s entities of `model`, numbered as a new store numbers them, or with the
    /// numbers of an existing store (by entity name, checked by `storeNumbering(of:model:configuration:url:)`).
    init(model: NSManagedObjectModel, configuration: String?, storeNumbers: [String: Int64]? = nil) {
        let members = model.entities(forConfigurationName: configuration) ?? model.entities
        let memberSet = Set(members.map(ObjectIdentifier.init))
        // Siblings by name, or in the store's order: Apple's framework made the store's tables visiting entities in
        // the order of its numbers, and that order decides which of two same-named columns gets the suffix.
        func byEntityName(_ a: NSEntityDescription, _ b: NSEntityDescription) -> Bool {
            if let storeNumbers, let x = storeNumbers[a._name ?? ""], let y = storeNumbers[b._name ?? ""], x != y {
                return x < y
            }
            return ModelVersionHasher.ordered(a._name ?? "", before: b._name ?? "")
        }
        // Number the entities depth-first, siblings by name.
        var ordered: [(entity: NSEntityDescription, superNumber: Int64, root: NSEntityDescription)] = []
        var numbers: [ObjectIdentifier: Int64] = [:]
        var lastDescendant: [ObjectIdentifier: Int] = [:]
        // Iteratively: a hierarchy may be deeper than the stack allows recursion.
        func visit(_ top: NSEntityDescription, root: NSEntityDescription) {
            var stack: [(entity: NSEntityDescription, superNumber: Int64, leaving: Bool)] = [(top, 0, false)]
            while let (entity, superNumber, leaving) = stack.popLast() {
                if leaving {
                    lastDescendant[ObjectIdentifier(entity)] = ordered.count - 1
                    continue
                }
                ordered.append((entity, superNumber, root))
                let number = storeNumbers?[entity._name ?? ""] ?? Int64(ordered.count)
                numbers[ObjectIdentifier(entity)] = number
                stack.append((entity, superNumber, true))
                let children = entity._subentities.filter { memberSet.contains(ObjectIdentifier($0)) }
                for child in children.sorted(by: byEntityName).reversed() {
                    stack.append((child, number, false))
                }
            }
        }
        let roots = members.filter { entity in
            guard let parent = entity._superentity else { return true }
            return !memberSet.contains(ObjectIdentifier(parent))
        }
        for root in roots.sorted(by: byEntityName) {
            visit(root, root: root)
        }

        var tablesByRoot: [ObjectIdentifier: SQLiteTable] = [:]
        var tables: [SQLiteTable] = []
        var entities: [SQLiteEntityMapping] = []
        for (index, (entity, superNumber, root)) in ordered.enumerated() {
            let table: SQLiteTable
            if let existing = tablesByRoot[ObjectIdentifier(root)] {
                table = existing
                table.isShared = true
            } else {
                table = SQLiteTable(
                    name: "Z" + (root._name ?? "").uppercased(), rootNumber: numbers[ObjectIdentifier(root)]!)
                tablesByRoot[ObjectIdentifier(root)] = table
                tables.append(table)
            }
            let mapping = SQLiteEntityMapping(
                entity: entity, number: numbers[ObjectIdentifier(entity)]!, superNumber: superNumber, table: table)
            mapping.orderIndex = index
            mapping.lastDescendantIndex = lastDescendant[ObjectIdentifier(entity)] ?? index
            entities.append(mapping)
        }
        numbersInOrder = entities.map(\.number)
        self.entities = entities
        self.tables = tables
        let lookup = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        byName = lookup
        var byNumber = [SQLiteEntityMapping?](repeating: nil, count: Int(entities.map(\.number).max() ?? 0) + 1)
        for entity in entities where entity.number >= 0 { byNumber[Int(entity.number)] = entity }
        self.byNumber = byNumber
        byIdentity = Dictionary(uniqueKeysWithValues: entities.map { (ObjectKey(ObjectIdentifier($0.entity)), $0) })

        let numbersByName = Dictionary(entities.map { ($0.name, $0.number) }, uniquingKeysWith: { first, _ in first })
        func number(of entity: NSEntityDescription?) -> Int64 {
            guard let entity else { return 0 }
            if let number = numbers[ObjectIdentifier(entity)] { return number }
            return entity._name.flatMap { numbersByName[$0] } ?? 0
        }

        // Columns, table by table.
        var entitiesByTable: [ObjectIdentifier: [SQLiteEntityMapping]] = [:]
        for entity in entities { entitiesByTable[ObjectIdentifier(entity.table), default: []].append(entity) }
        for table in tables {
            let members = entitiesByTable[ObjectIdentifier(table)] ?? []
            var pending: [(rank: Int, order: Int, column: SQLiteColumn)] = []
            var used = Set<String>(["Z_PK", "Z_ENT", "Z_OPT"])
            func unique(_ base: String) -> String {
                if used.insert(base).inserted { return base }
                var suffix = 1
                while !used.insert(base + String(suffix)).inserted { suffix += 1 }
                return base + String(suffix)
            }
            func add(_ name: String, _ type: SQLiteColumnType, _ role: SQLiteColumn.Role) {
                pending.append((type.rank, pending.count, SQLiteColumn(name: name, type: type, role: role)))
            }
            // The names the entity's ancestors declare: the members come depth first, each after its superentity,
            // so a stack of the names each ancestor adds (an entity's cache would be made for every entity).
            var ancestors: [(entity: NSEntityDescription, names: [String])] = []
            var declared: [String: Int] = [:]
            for mapping in members {
                while let last = ancestors.last, last.entity !== mapping.entity._superentity {
                    for name in ancestors.removeLast().names {
                        declared[name, default: 1] -= 1
                        if declared[name] == 0 { declared[name] = nil }
                    }
                }
                let own = mapping.entity._ownProperties.filter { declared[$0._name] == nil }
                let names = mapping.entity._ownProperties.map(\._name)
                for name in names { declared[name, default: 0] += 1 }
                ancestors.append((mapping.entity, names))
                for case let attribute as NSAttributeDescription in own where !attribute._isTransient {
                    add(
                        unique("Z" + attribute._name.uppercased()), SQLiteColumnType(attribute._attributeType),
                        .attribute(attribute))
                }
                for case let relationship as NSRelationshipDescription in own
                where !relationship._isTransient && !relationship.isToMany {
                    let upper = relationship._name.uppercased()
                    add(unique("Z" + upper), .integer, .foreignKey(relationship))
                    if let destination = relationship._destinationEntity,
                        destination._subentities.contains(where: { memberSet.contains(ObjectIdentifier($0)) })
                    {
                        add(unique("Z\(number(of: destination))_" + upper), .integer, .foreignEntity(relationship))
                    }
                    if let inverse = relationship._inverseRelationship, inverse.isToMany, inverse._isOrdered {
                        add(unique("Z_FOK_" + upper), .integer, .order(inverse))
                    }
                }
            }
            table.setColumns(pending.sorted { ($0.rank, $0.order) < ($1.rank, $1.order) }.map(\.column))
        }

        // Join tables for many-to-many relationships and for to-many relationships without an inverse.
        var joins: [ObjectIdentifier: SQLiteJoin] = [:]
        var joinTables: [SQLiteJoinTable] = []
        var joinTableNames = Set<String>()
        var sharedJoinTable: (entity: String, relationship: String, table: String)?
        for mapping in entities {
            for case let relationship as NSRelationshipDescription in mapping.entity._ownProperties
            where relationship.isToMany && !relationship._isTransient && joins[ObjectIdentifier(relationship)] == nil {
                let inverse = relationship._inverseRelationship
                if let inverse, !inverse.isToMany { continue }
                let owner: NSRelationshipDescription
                let other: NSRelationshipDescription?
                if let inverse, inverse !== relationship,
                    ModelVersionHasher.ordered(relationship._name, before: inverse._name)
                {
                    owner = inverse
                    other = relationship
                } else {
                    owner = relationship
                    other = inverse === relationship ? nil : inverse
                }
                let ownerNumber = number(of: owner._entity)
                let name = "Z_\(ownerNumber)" + owner._name.uppercased()
                // A relationship that is its own inverse names both columns (the second one numbered).
                let otherName = (other?._name ?? (inverse === owner ? owner._name : owner._entity?._name) ?? "")
                    .uppercased()
                let first = "Z_\(ownerNumber)" + otherName
                var second = "Z_\(number(of: owner._destinationEntity))" + owner._name.uppercased()
                if second == first { second += "1" }
                let ownerOrder = owner._isOrdered ? "Z_FOK_" + second.dropFirst(2) : nil
                let otherOrder = (other?._isOrdered ?? false) ? "Z_FOK_" + first.dropFirst(2) : nil
                func tableName(_ entity: NSEntityDescription?) -> String {
                    entity.flatMap { lookup[$0._name ?? ""] }?.table.name ?? ""
                }
                joins[ObjectIdentifier(owner)] = SQLiteJoin(
                    table: name, sourceColumn: first, destinationColumn: second, orderColumn: ownerOrder,
                    destinationTable: tableName(owner._destinationEntity))
                if let other {
                    joins[ObjectIdentifier(other)] = SQLiteJoin(
                        table: name, sourceColumn: second, destinationColumn: first, orderColumn: otherOrder,
                        destinationTable: tableName(owner._entity))
                }
                if joinTableNames.insert(name).inserted {
                    joinTables.append(
                        SQLiteJoinTable(
                            name: name, firstColumn: first, secondColumn: second,
                            orderColumns: [ownerOrder, otherOrder].compactMap { $0 }))
                } else if sharedJoinTable == nil {
                    // Names equal but for case (`tags` and `Tags`) would put two relationships' rows in one table.
                    sharedJoinTable = (mapping.name, owner._name, name)
                }
            }
        }
        self.joinTables = joinTables
        self.sharedJoinTable = sharedJoinTable
        self.joins = joins

        // Derived counts, from each entity's own derived attributes; slots are laid out when first used.
        var derivedCounts: [SQLiteDerivedCount] = []
        for mapping in entities {
            for case let derived as NSDerivedAttributeDescription in mapping.entity._ownProperties
            where !derived._isTransient && Self.columnIndex(forAttribute: derived, in: mapping.table) != nil {
                if let count = Self.derivedCount(derived, in: mapping, table: mapping.table, byName: lookup) {
                    derivedCounts.append(count)
                }
            }
        }
        self.derivedCounts = derivedCounts
        joinColumnsByTable = Self.joinColumnsByTable(entities, joins: joins)
        for mapping in entities { mapping.owner = self }
    }

    /// Where each slot of `mapping`'s entity lives: the slots, the read plan and the to-many slots.
    func slots(of mapping: SQLiteEntityMapping) -> (
        slots: [SQLiteEntityMapping.Slot], readPlan: [(slot: Int, column: Int32)], toManySlots: [Int]
    ) {
        let table = mapping.table
        let lookup = byName
        let layout = mapping.entity._caches
        var slots: [SQLiteEntityMapping.Slot] = []
        slots.reserveCapacity(layout.slots.count)
        var readPlan: [(slot: Int, column: Int32)] = []
        var toManySlots: [Int] = []
        for (index, slot) in layout.slots.enumerated() {
            switch slot.property {
            case let relationship as NSRelationshipDescription where !relationship._isTransient:
                if relationship.isToMany {
                    let storage: SQLiteToManyStorage
                    if let join = joins[ObjectIdentifier(relationship)] {
                        storage = .join(join)
                    } else if let inverse = relationship._inverseRelationship,
                        let destination = relationship._destinationEntity.flatMap({ lookup[$0._name ?? ""] }),
                        let foreignKey = Self.column(for: inverse, role: "fk", in: destination.table)
                    {
                        storage = .foreignKey(
                            table: destination.table, column: foreignKey,
                            orderColumn: relationship._isOrdered
                                ? Self.column(for: inverse, role: "order", in: destination.table) : nil)
                    } else {
                        slots.append(.none)
                        continue
                    }
                    slots.append(.toMany(storage, relationship: relationship))
                    toManySlots.append(index)
                } else if let foreignKey = Self.columnIndex(for: relationship, role: "fk", in: table) {
                    slots.append(
                        .toOne(
                            foreignKey: foreignKey,
                            entityColumn: Self.columnIndex(for: relationship, role: "entity", in: table),
                            relationship: relationship))
                    readPlan.append((index, Int32(foreignKey + 3)))
                } else {
                    slots.append(.none)
                }
            case let attribute as NSAttributeDescription where !attribute._isTransient:
                guard let column = Self.columnIndex(forAttribute: attribute, in: table) else {
                    slots.append(.none)
                    continue
                }
                if attribute is NSDerivedAttributeDescription {
                    slots.append(.derived(column: column, type: attribute._attributeType, attribute: attribute))
                } else {
                    slots.append(.attribute(column: column, type: attribute._attributeType, attribute: attribute))
                }
                readPlan.append((index, Int32(column + 3)))
            default:
                slots.append(.none)
            }
        }
        return (slots, readPlan, toManySlots)
    }

    private static func columnIndex(forAttribute attribute: NSAttributeDescription, in table: SQLiteTable) -> Int? {
        table.columnByRole[SQLiteColumn.Role.attribute(attribute).key]
    }

    private static func columnIndex(
        for relationship: NSRelationshipDescription, role: String, in table: SQLiteTable
    ) -> Int? {
        let kind: UInt8
        switch role {
        case "fk": kind = 1
        case "entity": kind = 2
        case "order": kind = 3
        default: return nil
        }
        return table.columnByRole[SQLiteColumn.RoleKey(kind: kind, description: ObjectIdentifier(relationship))]
    }

    private static func column(for relationship: NSRelationshipDescription, role: String, in table: SQLiteTable)
        -> String?
    {
        columnIndex(for: relationship, role: role, in: table).map { table.columns[$0].name }
    }

    /// A `to-many.@count` derivation kept by triggers, if `attribute` is one.
    private static func derivedCount(
        _ attribute: NSDerivedAttributeDescription, in mapping: SQLiteEntityMapping, table: SQLiteTable,
        byName: [String: SQLiteEntityMapping]
    ) -> SQLiteDerivedCount? {
        // `to-many.@count`, which the model keeps as `count:(to-many)`, as Apple's framework does.
        var name: String?
        switch attribute._derivationExpression?.kind {
        case .keyPath(_, let components, nil) where components.count == 2 && components[1] == "@count":
            name = components[0]
        case .function("count:", nil, let arguments) where arguments.count == 1:
            if case .keyPath(_, let components, nil) = arguments[0].kind, components.count == 1 { name = components[0] }
        default:
            break
        }
        guard let name, let relationship = mapping.entity._caches.relationshipsByName[name], relationship.isToMany,
            let inverse = relationship._inverseRelationship, !inverse.isToMany,
            let destination = relationship._destinationEntity.flatMap({ byName[$0._name ?? ""] }),
            let foreignKey = column(for: inverse, role: "fk", in: destination.table),
            let column = columnIndex(forAttribute: attribute, in: table)
        else { return nil }
        return SQLiteDerivedCount(
            entityName: mapping.name, attributeName: attribute._name, sourceTable: table.name,
            sourceColumn: table.columns[column].name, destinationTable: destination.table.name,
            foreignKey: foreignKey)
    }

    /// The join-table columns that hold primary keys of `table`'s rows (whose rows go when those rows are deleted).
    func joinColumns(holdingKeysOf table: SQLiteTable) -> [(table: String, column: String)] {
        joinColumnsByTable[table.name] ?? []
    }

    /// `joinColumns(holdingKeysOf:)` of every table, in one pass over the relationships the entities declare (a
    /// subentity's inherited relationships use its superentity's joins, in the same table).
    private static func joinColumnsByTable(
        _ entities: [SQLiteEntityMapping], joins: [ObjectIdentifier: SQLiteJoin]
    ) -> [String: [(table: String, column: String)]] {
        var columns: [String: [(table: String, column: String)]] = [:]
        var seen = Set<[String]>()
        func add(_ table: String, _ join: String, _ column: String) {
            guard seen.insert([table, join, column]).inserted else { return }
            columns[table, default: []].append((join, column))
        }
        for entity in entities {
            for case let relationship as NSRelationshipDescription in entity.entity._ownProperties
            where relationship.isToMany && !relationship._isTransient {
                guard let join = joins[ObjectIdentifier(relationship)] else { continue }
                add(entity.table.name, join.table, join.sourceColumn)
                add(join.destinationTable, join.table, join.destinationColumn)
            }
        }
        return columns
    }

    /// The mapping of `entity` (matched by name, so that equal models work alike).
    func entity(_ entity: NSEntityDescription) -> SQLiteEntityMapping? {
        byIdentity[ObjectKey(ObjectIdentifier(entity))] ?? byName[entity._name ?? ""]
    }

    /// The mapping of entity number `number`.
    func entity(number: Int64) -> SQLiteEntityMapping? {
        guard number >= 0, number < byNumber.count else { return nil }
        return byNumber[Int(number)]
    }

    /// `entity(number:)` without a retain, for the entity number of every row read: the mapping holds its entities.
    @inline(__always)
    func unretainedEntity(number: Int64) -> Unmanaged<SQLiteEntityMapping>? {
        guard number >= 0, number < byNumber.count else { return nil }
        return byNumber.withUnsafeBufferPointer { byNumber in
            byNumber[Int(number)].map { Unmanaged.passUnretained($0) }
        }
    }
}
