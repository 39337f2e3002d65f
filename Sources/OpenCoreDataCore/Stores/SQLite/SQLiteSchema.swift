// How a model maps onto Core Data's SQLite layout, as Apple's framework writes it (the stores in shared/corpus are
// the reference):
//
// - Entities are numbered from 1 (`Z_ENT`) depth-first: root entities by name, each followed by its subentities,
//   siblings by name. `Z_PRIMARYKEY` has one row per entity (`Z_SUPER` = the superentity's number).
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

/// The declared type of a store column, which also decides its place in its table.
enum SQLiteColumnType: String {
    case integer = "INTEGER"
    case timestamp = "TIMESTAMP"
    case float = "FLOAT"
    case decimal = "DECIMAL"
    case varchar = "VARCHAR"
    case blob = "BLOB"

    /// Apple's column order: integers first, blobs last; timestamps and floats share a rank.
    var rank: Int {
        switch self {
        case .integer: return 0
        case .timestamp, .float: return 1
        case .decimal: return 2
        case .varchar: return 3
        case .blob: return 4
        }
    }

    /// The column type of an attribute type.
    init(_ type: NSAttributeType) {
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType:
            self = .integer
        case .dateAttributeType: self = .timestamp
        case .doubleAttributeType, .floatAttributeType: self = .float
        case .decimalAttributeType: self = .decimal
        case .stringAttributeType, .URIAttributeType, .objectIDAttributeType: self = .varchar
        case .binaryDataAttributeType, .UUIDAttributeType, .transformableAttributeType, .compositeAttributeType,
            .undefinedAttributeType:
            self = .blob
        }
    }
}

/// One column of an entity table (beyond `Z_PK`, `Z_ENT` and `Z_OPT`).
struct SQLiteColumn {
    enum Role {
        case attribute(NSAttributeDescription)
        /// The destination's primary key of a to-one relationship.
        case foreignKey(NSRelationshipDescription)
        /// The destination's entity number of a to-one relationship whose destination has subentities.
        case foreignEntity(NSRelationshipDescription)
        /// The position of the row in an ordered to-many relationship (the to-one here is its inverse).
        case order(NSRelationshipDescription)
    }

    /// A role as a dictionary key: its kind and the identity of its description.
    struct RoleKey: Hashable {
        let kind: UInt8
        let description: ObjectIdentifier
    }

    let name: String
    let type: SQLiteColumnType
    let role: Role
}

extension SQLiteColumn.Role {
    var key: SQLiteColumn.RoleKey {
        switch self {
        case .attribute(let attribute): return .init(kind: 0, description: ObjectIdentifier(attribute))
        case .foreignKey(let relationship): return .init(kind: 1, description: ObjectIdentifier(relationship))
        case .foreignEntity(let relationship): return .init(kind: 2, description: ObjectIdentifier(relationship))
        // Found through the to-many relationship whose positions it holds (the inverse of the one it names).
        case .order(let inverse):
            return .init(kind: 3, description: ObjectIdentifier(inverse._inverseRelationship ?? inverse))
        }
    }
}

/// The table of one entity hierarchy.
final class SQLiteTable {
    let name: String
    let rootNumber: Int64
    /// The columns after `Z_PK`, `Z_ENT` and `Z_OPT`, in table order.
    private(set) var columns: [SQLiteColumn] = []
    private(set) var columnIndex: [String: Int] = [:]
    /// The column of each attribute, foreign key, foreign entity and position, by the description it stores (a
    /// search of the columns for every slot of every entity made a deep hierarchy cubic).
    private(set) var columnByRole: [SQLiteColumn.RoleKey: Int] = [:]
    /// Whether several entities share the table (and so `Z_ENT` is indexed).
    var isShared = false

    /// `SELECT <every column> FROM <table> t0 WHERE t0.Z_PK = ?`: the query that fulfils one fault, made once
    /// rather than for every fault.
    private(set) var selectByPrimaryKeySQL = ""
    /// The same for many rows: their keys are bound as one JSON array (`SQLiteTable.keyList(_:)`), so that one
    /// cached statement serves every number of rows.
    private(set) var selectByPrimaryKeysSQL = ""
    /// `Z_PK, Z_OPT` of the rows whose keys are bound as a JSON array: the versions a save checks.
    let selectVersionsSQL: String
    /// Deletes one row if it still has the version the saving context saw (Core Data's optimistic locking: a row
    /// changed or deleted by someone else is left alone, and the save fails with a conflict).
    let deleteCheckedSQL: String
    /// Deletes one row whatever its version (a merge policy chose to overwrite).
    let deleteSQL: String
    /// `deleteCheckedSQL` for `deleteBatchSize` rows of one version at once (the version first, then the keys):
    /// a large deletion runs a statement per batch instead of one per row.
    let deleteCheckedBatchSQL: String
    /// `deleteSQL` for `deleteBatchSize` rows at once.
    let deleteBatchSQL: String
    /// How many rows the batch statements delete.
    static let deleteBatchSize = 64

    init(name: String, rootNumber: Int64) {
        self.name = name
        self.rootNumber = rootNumber
        selectVersionsSQL = "SELECT Z_PK, Z_OPT FROM \(name) WHERE Z_PK IN \(Self.boundKeys)"
        deleteCheckedSQL = "DELETE FROM \(name) WHERE Z_PK = ? AND Z_OPT = ?"
        deleteSQL = "DELETE FROM \(name) WHERE Z_PK = ?"
        let keys = Array(repeating: "?", count: Self.deleteBatchSize).joined(separator: ", ")
        deleteCheckedBatchSQL = "DELETE FROM \(name) WHERE Z_OPT = ? AND Z_PK IN (\(keys))"
        deleteBatchSQL = "DELETE FROM \(name) WHERE Z_PK IN (\(keys))"
    }

    /// The SQL that stands for a set of keys bound as one JSON array.
    static let boundKeys = "(SELECT value FROM json_each(?))"

    /// `keys` as the JSON array that `boundKeys` reads.
    static func keyList(_ keys: some Sequence<Int64>) -> SQLiteValue {
        // Written digit by digit into one buffer: formatting each key as a String of its own cost more than the
        // query that reads the list.
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        bytes.reserveCapacity(keys.underestimatedCount * 8 + 2)
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        for key in keys {
            if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
            if key < 0 { bytes.append(UInt8(ascii: "-")) }
            var magnitude = key.magnitude
            withUnsafeMutableBytes(of: &digits) { buffer in
                var end = buffer.count
                repeat {
                    end -= 1
                    buffer[end] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                    magnitude /= 10
                } while magnitude > 0
                bytes.append(contentsOf: buffer[end...])
            }
        }
        bytes.append(UInt8(ascii: "]"))
        return .text(String(decoding: bytes, as: UTF8.self))
    }

    func setColumns(_ columns: [SQLiteColumn]) {
        self.columns = columns
        columnIndex = Dictionary(uniqueKeysWithValues: columns.enumerated().map { ($1.name, $0) })
        columnByRole = Dictionary(
            columns.enumerated().map { ($1.role.key, $0) }, uniquingKeysWith: { first, _ in first })
        selectListT0 = nil
        selectListT0 = selectList(alias: "t0")
        selectByPrimaryKeySQL = "SELECT \(selectList(alias: "t0")) FROM \(name) t0 WHERE t0.Z_PK = ?"
        selectByPrimaryKeysSQL = "SELECT \(selectList(alias: "t0")) FROM \(name) t0 WHERE t0.Z_PK IN \(Self.boundKeys)"
    }

    /// `t.Z_PK, t.Z_ENT, t.Z_OPT, t.<column>…`: every column, in table order, for `alias` (made once for `t0`, the
    /// alias of almost every query).
    func selectList(alias: String) -> String {
        if alias == "t0", let selectListT0 { return selectListT0 }
        return ([alias + ".Z_PK", alias + ".Z_ENT", alias + ".Z_OPT"] + columns.map { alias + "." + $0.name })
            .joined(separator: ", ")
    }

    private var selectListT0: String?
}

/// The join table of a many-to-many relationship (or of a to-many without inverse), seen from one relationship.
struct SQLiteJoin {
    let table: String
    /// Holds the primary key of the relationship's source object.
    let sourceColumn: String
    /// Holds the primary key of the destination object.
    let destinationColumn: String
    /// Holds the destination's position among the source's destinations, for an ordered relationship.
    let orderColumn: String?
    /// The table of the destination objects.
    let destinationTable: String
}

/// A join table's definition.
struct SQLiteJoinTable {
    let name: String
    let firstColumn: String
    let secondColumn: String
    let orderColumns: [String]
}

/// How an entity's objects are stored: its number, its table, and where each slot of its layout lives.
final class SQLiteEntityMapping {
    /// Where one slot's value is stored.
    enum Slot {
        /// Not stored (transient, fetched).
        case none
        /// An attribute column (index into the table's columns).
        case attribute(column: Int, type: NSAttributeType, attribute: NSAttributeDescription)
        /// A derived attribute's column: read, never written from the object's value.
        case derived(column: Int, type: NSAttributeType, attribute: NSAttributeDescription)
        /// A to-one relationship's foreign key (and the destination entity's column, if any).
        case toOne(foreignKey: Int, entityColumn: Int?, relationship: NSRelationshipDescription)
        /// A to-many relationship.
        case toMany(SQLiteToManyStorage, relationship: NSRelationshipDescription)
    }

    let entity: NSEntityDescription
    let name: String
    let number: Int64
    let superNumber: Int64
    let table: SQLiteTable
    /// This entity's number and its subentities' (recursively): entities are numbered depth first, so they are
    /// the numbers from its own to that of its last descendant.
    var kindNumbers: ClosedRange<Int64> { number...lastDescendantNumber }
    var lastDescendantNumber: Int64 = 0

    // Where each slot lives, laid out when the entity is first used: a slot per property, inherited ones included,
    // so that laying out every entity of a deep hierarchy would grow with its depth squared. Used under the
    // coordinator's lock, like the rest of the store.
    private var _slots: [Slot] = []
    private var _unstoredSlots: [Int] = []
    private var _readPlan: [(slot: Int, column: Int32)] = []
    private var _readSteps: [SQLiteReadStep] = []
    private var _toManySlots: [Int] = []
    private var isLaidOut = false
    /// The mapping that lays the entity out (and holds it).
    unowned var owner: SQLiteModelMapping?

    /// One entry per slot of `entity._caches.slots`.
    var slots: [Slot] {
        layOutIfNeeded()
        return _slots
    }
    /// The slots that are not stored (transient and fetched properties).
    var unstoredSlots: [Int] {
        layOutIfNeeded()
        return _unstoredSlots
    }
    /// The slots read from a fetched row: (slot, column offset in the select list).
    var readPlan: [(slot: Int, column: Int32)] {
        layOutIfNeeded()
        return _readPlan
    }
    /// `readPlan` with what each column holds, as plain values: decoding a row switches on them instead of
    /// copying `slots`' payloads (and retaining their descriptions) for every column of every row.
    var readSteps: [SQLiteReadStep] {
        layOutIfNeeded()
        return _readSteps
    }
    /// The slots of to-many relationships (stored as faults in rows).
    var toManySlots: [Int] {
        layOutIfNeeded()
        return _toManySlots
    }

    @inline(__always)
    private func layOutIfNeeded() {
        if !isLaidOut { layOut() }
    }

    private func layOut() {
        guard let owner else { preconditionFailure("The mapping of entity '\(name)' is used without its model's") }
        isLaidOut = true
        let (slots, readPlan, toManySlots) = owner.slots(of: self)
        _slots = slots
        _unstoredSlots = slots.indices.filter {
            if case .none = slots[$0] { return true }
            return false
        }
        _readPlan = readPlan
        _readSteps = readPlan.map { SQLiteReadStep(slot: $0.slot, column: $0.column, storage: slots[$0.slot]) }
        _toManySlots = toManySlots
    }

    init(entity: NSEntityDescription, number: Int64, superNumber: Int64, table: SQLiteTable) {
        self.entity = entity
        name = entity._name ?? ""
        self.number = number
        self.superNumber = superNumber
        self.table = table
    }
}

/// How one column of a fetched row is decoded.
struct SQLiteReadStep {
    enum Kind: UInt8 {
        case integer, boolean, double, float, date, string, binary
        /// A to-one relationship's foreign key.
        case toOne
        /// Anything else (decimals, UUIDs, URIs, transformables): read through the slot's description.
        case general
    }

    let slot: Int
    let column: Int32
    let kind: Kind
    /// For a to-one key: the relationship's destination entity (held by the model the mapping keeps), and the
    /// select-list column of the destination's entity number when the destination has subentities (else -1).
    let destination: Unmanaged<NSEntityDescription>?
    let entityColumn: Int32

    init(slot: Int, column: Int32, storage: SQLiteEntityMapping.Slot) {
        self.slot = slot
        self.column = column
        switch storage {
        case .attribute(_, let type, _):
            destination = nil
            entityColumn = -1
            switch type {
            case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType: kind = .integer
            case .booleanAttributeType: kind = .boolean
            case .doubleAttributeType: kind = .double
            case .floatAttributeType: kind = .float
            case .dateAttributeType: kind = .date
            case .stringAttributeType: kind = .string
            case .binaryDataAttributeType: kind = .binary
            default: kind = .general
            }
        case .toOne(_, let entityColumn, let relationship):
            kind = .toOne
            destination = relationship._destinationEntity.map { Unmanaged.passUnretained($0) }
            self.entityColumn = entityColumn.map { Int32($0 + 3) } ?? -1
        default:
            kind = .general
            destination = nil
            entityColumn = -1
        }
    }
}

/// Where a to-many relationship's destinations are recorded.
enum SQLiteToManyStorage {
    /// In the destination table, as the foreign key of the inverse to-one (with positions for an ordered one).
    case foreignKey(table: SQLiteTable, column: String, orderColumn: String?)
    /// In a join table.
    case join(SQLiteJoin)
}

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

    /// The mapping of `configuration`'s entities of `model`.
    init(model: NSManagedObjectModel, configuration: String?) {
        let members = model.entities(forConfigurationName: configuration) ?? model.entities
        let memberSet = Set(members.map(ObjectIdentifier.init))
        func byEntityName(_ a: NSEntityDescription, _ b: NSEntityDescription) -> Bool {
            ModelVersionHasher.ordered(a._name ?? "", before: b._name ?? "")
        }
        // Number the entities depth-first, siblings by name.
        var ordered: [(entity: NSEntityDescription, superNumber: Int64, root: NSEntityDescription)] = []
        var numbers: [ObjectIdentifier: Int64] = [:]
        var lastDescendant: [ObjectIdentifier: Int64] = [:]
        // Iteratively: a hierarchy may be deeper than the stack allows recursion.
        func visit(_ top: NSEntityDescription, root: NSEntityDescription) {
            var stack: [(entity: NSEntityDescription, superNumber: Int64, leaving: Bool)] = [(top, 0, false)]
            while let (entity, superNumber, leaving) = stack.popLast() {
                if leaving {
                    lastDescendant[ObjectIdentifier(entity)] = Int64(ordered.count)
                    continue
                }
                ordered.append((entity, superNumber, root))
                let number = Int64(ordered.count)
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
        for (entity, superNumber, root) in ordered {
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
            entities.append(
                SQLiteEntityMapping(
                    entity: entity, number: numbers[ObjectIdentifier(entity)]!, superNumber: superNumber, table: table)
            )
        }
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
            mapping.lastDescendantNumber = lastDescendant[ObjectIdentifier(mapping.entity)] ?? mapping.number
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
    fileprivate func slots(of mapping: SQLiteEntityMapping) -> (
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
}
